#!/usr/bin/env python3
"""A drain fixture not written in Go, for healthctl drain-test's scripts.

Stdlib only: http.server's ThreadingHTTPServer and a SIGTERM handler that
does what seeds/003 asks: readiness answers 503 at once, the listener keeps
serving for PRE_DRAIN_MS, then it closes, in-flight requests finish, and the
process exits 0 within SHUTDOWN_TIMEOUT_MS.

usage: drainsvc.py --addr 127.0.0.1:PORT [--mode good|neverflip|exit1|cutexport]
                   [--events FILE] [--pidfile FILE] [--slow SECONDS]
                   [--ready-ok 200] [--ready-fail 503] [--cleanup SECONDS]

/ready, /live and /slow (half its body at once, the rest after --slow).
--mode cutexport is the stock ThreadingHTTPServer mistake: /slow streams
without a Content-Length, and the process exits after the pre-drain without
waiting for its (daemon) request threads, cutting the body.
--ready-ok and --ready-fail are readiness's statuses (a 204, a 500 are as
good as 200 and 503 to the kubelet); --cleanup is time spent after the
server closed (flushing traces) before the exit.
--events gets "flip T", "close T", "exit T" lines, T in ms since SIGTERM.
"""

import argparse
import http.server
import os
import signal
import sys
import tempfile
import threading
import time

state = {"ready": True, "closing": False, "received": None, "lines": []}
lock = threading.Lock()


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path))
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True)
    ap.add_argument("--mode", default="good", choices=["good", "neverflip", "exit1", "cutexport"])
    ap.add_argument("--events")
    ap.add_argument("--pidfile")
    ap.add_argument("--slow", type=float, default=1.0)
    ap.add_argument("--ready-ok", type=int, default=200)
    ap.add_argument("--ready-fail", type=int, default=503)
    ap.add_argument("--cleanup", type=float, default=0.0)
    args = ap.parse_args()
    host, port = args.addr.rsplit(":", 1)
    if host not in ("127.0.0.1", "::1"):
        sys.exit("drainsvc.py: --addr must be loopback")
    pre_drain = int(os.environ.get("PRE_DRAIN_MS", "5000")) / 1000.0

    def record(event):
        if not args.events:
            return
        with lock:
            t = (time.monotonic() - state["received"]) * 1000.0
            state["lines"].append("%s %.1f" % (event, t))
            write_atomic(args.events, "\n".join(state["lines"]) + "\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive
        timeout = 1.0  # an idle kept-alive connection ends after 1 s

        def log_message(self, *a):
            pass

        def send(self, status, body):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if state["closing"]:
                # Draining: finish this response, then close the connection.
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/ready":
                if state["ready"]:
                    self.send(args.ready_ok, b'{"status":"ready"}\n')
                else:
                    self.send(args.ready_fail, b'{"status":"not ready"}\n')
            elif self.path == "/live":
                self.send(200, b'{"status":"alive"}\n')
            elif self.path == "/slow" and args.mode == "cutexport":
                # No Content-Length: the body ends when the connection does.
                self.send_response(200)
                self.send_header("Content-Type", "text/csv")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for _ in range(int(args.slow * 20)):
                    self.wfile.write(b"drain-test,export,row\n" * 50)
                    self.wfile.flush()
                    time.sleep(0.05)
            elif self.path == "/slow":
                body = b"drain-test in-flight body\n" * 1000
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                time.sleep(args.slow)
                self.wfile.write(body[len(body) // 2 :])
                self.close_connection = True
            else:
                self.send(404, b'{"status":"not found"}\n')

    class Server(http.server.ThreadingHTTPServer):
        # server_close() waits for in-flight requests; cutexport's daemon
        # threads die with the process.
        daemon_threads = args.mode == "cutexport"
        # listen(128), as production servers do (socketserver's default is
        # 5): on a loaded machine the accept loop runs late, and a queue of
        # 5 drops the SYNs of a burst (connect timeouts no real server
        # configured so would give).
        request_queue_size = 128

    srv = Server((host, int(port)), Handler)
    if args.pidfile:
        write_atomic(args.pidfile, "%d\n" % os.getpid())
    stop = threading.Event()

    def on_term(signum, frame):
        if state["received"] is None:
            state["received"] = time.monotonic()
            stop.set()

    signal.signal(signal.SIGTERM, on_term)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    while not stop.wait(0.05):
        pass

    record("signal")
    if args.mode != "neverflip":
        state["ready"] = False
        record("flip")
    time.sleep(pre_drain)
    if args.mode == "cutexport":
        record("exit")
        sys.exit(0)  # daemon threads, mid-body, die here
    state["closing"] = True
    srv.shutdown()      # stop accepting
    srv.socket.close()  # close the listener now
    record("close")
    srv.server_close()  # join the request threads: in-flight requests finish
    time.sleep(args.cleanup)  # flush traces, close pools
    record("exit")
    sys.exit(1 if args.mode == "exit1" else 0)


if __name__ == "__main__":
    main()
