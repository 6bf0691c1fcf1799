# A Rack app under Puma, for drain-test: /ready, /live, /slow (SLOW_MS,
# default 1500). Puma's own SIGTERM handling is what is judged: a graceful
# stop (the listener closes, requests in flight finish), then SIGTERM is
# raised again unless raise_exception_on_sigterm is false (puma-exit0.rb).
slow = Integer(ENV.fetch('SLOW_MS', '1500')) / 1000.0
run lambda { |env|
  case env['PATH_INFO']
  when '/slow'
    sleep slow
    body = 'slow done ' + 'x' * 4096 + "\n"
  else
    body = "ok\n"
  end
  [200, { 'content-type' => 'text/plain', 'content-length' => body.bytesize.to_s }, [body]]
}
