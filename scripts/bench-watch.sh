#!/usr/bin/env bash
# bench-watch.sh — `healthctl watch --once --state F --prom-file F` twice
# on one state file (a cron fleet's first and second runs, each reported
# apart) over 1,000 and 10,000 loopback targets in the shapes people write
# (block entries, flow mappings with quoted URLs, comments, headers per
# target: benchwatch -shape users; SHAPE=block for the plainest block
# style), once with URLs that differ by their path and once by a query
# string (URLS="path query", benchwatch -urls), spread over 100 addresses across 127/8 (ADDRS=N for another
# spread), against one loopback
# server (nginx on 0.0.0.0, allowing 127/8 only, as the performance budget
# measures it; else benchwatch's own Go server on 127.0.0.1), and
# `ab -n N -c 64` (fresh connections) and `curl --parallel --parallel-max
# 64` over the same URLs against the same server in the same runs,
# alternating (curl as the budget names it, which keeps a connection to an
# address for its next URL, and curl with `-H 'Connection: close'`, a
# connection per URL as a probe dials; each with the connections it
# opened): wall time, CPU time
# (user+sys: steadier than wall on a shared machine) and peak RSS of
# healthctl, the sweep's own duration, and the ratio to ab; and the Go floor
# in the same runs (benchwatch -floor: a minimal Go client that dials, writes
# net/http's request, parses the answer with net/http and closes, 64 at a
# time: what any Go prober pays here before doing anything of its own), and
# the bare floor (benchwatch -bare: the same client with the request
# written as fixed bytes and the answer read to EOF, no HTTP parsing: what
# Go's net package and runtime cost against ab's own epoll loop), and the
# epoll floor (benchwatch -epoll: that exchange on one thread over one
# epoll set, as ab makes it: what an I/O loop of healthctl's own would
# cost). The server's CPU time is measured around every run (-server-pid):
# client and server share the machine, so each run's wall time is their
# CPU time over the cores they keep busy, and the line "1.5x ab leaves
# the client N ms of CPU" is the budget in CPU; the line "CPU per target,
# user + system" splits each client's CPU: the system part (the kernel's
# work for a loopback connection) is dear or cheap as the host is that
# day, and moves the ratio to ab (nearly all system time) with it; the user
# part is the client's own code. The default --concurrency and the
# shell's `ulimit -n`.
# Besides medians: each sweep's ratio to the ab run of its round, and with
# BASE this tree's sweeps over BASE's, run by run (paired: the host's drift
# cancels).
# Loopback only; every sweep is bounded (60 s) and the server stops with it.
#
#   [SHAPE=users|block|headers] [URLS="path query"] [ADDRS=100] [REPEAT=3] [GCOFF=1] scripts/bench-watch.sh [RUNS] [COUNTS] [BASE]
#     (default 3 runs, 1000,10000; BASE: a git ref also built and measured,
#      its runs alternating with this tree's, e.g. main)
#
# Target (the performance budget, SPEC §10): 10,000 targets within 1.5x
# ab's and 1.0x curl's wall time and 96 MiB; at 10,000 targets benchwatch
# prints whether the run met the ab line (the paired median and the median
# peak RSS), on this host that hour. The machine is shared: read the paired
# ratios, not the medians across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
counts=${2:-1000,10000}
base=${3:-}
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
echo "building as released (scripts/build-released.sh)..."
scripts/build-released.sh "$work/healthctl"
bins="$work/healthctl"
if [ -n "$base" ]; then
	echo "building $base ($(git rev-parse --short "$base")) the same way..."
	mkdir "$work/base"
	git archive "$base" | tar -x -C "$work/base"
	# with this tree's build-released.sh (an old base may not have it)
	cp scripts/build-released.sh "$work/base/scripts/build-released.sh"
	"$work/base/scripts/build-released.sh" "$work/healthctl-base"
	bins="$work/healthctl-base,$bins"
fi
if [ -n "${GCOFF:-}" ]; then
	# The same binary without the limit --once sets itself (GOMEMLIMIT,
	# "off" included, wins); exec keeps the measured process healthctl.
	printf '#!/bin/sh\nGOMEMLIMIT=off exec %q "$@"\n' "$work/healthctl" > "$work/healthctl-gomemlimit-off"
	chmod +x "$work/healthctl-gomemlimit-off"
	bins="$bins,$work/healthctl-gomemlimit-off"
fi
go build -o "$work/benchwatch" ./scripts/benchwatch
server=()
if command -v nginx >/dev/null; then
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0",0)); print(s.getsockname()[1])')
	cat > "$work/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $work/nginx.pid; error_log $work/error.log;
worker_rlimit_nofile 8192;
events { worker_connections 4096; }
http { access_log off; server { listen 0.0.0.0:$port backlog=4096; allow 127.0.0.0/8; deny all; location / { return 200 "ok\n"; } } }
CONF
	nginx -c "$work/nginx.conf" -p "$work" & echo $! > "$work/server.pid"
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.05; done
	curl -sf "http://127.0.0.1:$port/" >/dev/null || { echo "nginx did not come up on 127.0.0.1:$port" >&2; exit 1; }
	server=(-server "127.0.0.1:$port" -server-pid "$(cat "$work/server.pid")" -addrs "${ADDRS:-100}")
	echo "server: nginx (1 worker) on 0.0.0.0:$port (127/8 only)"
else
	echo "server: benchwatch's own Go server on 127.0.0.1 (nginx not installed): every target at one address"
fi
abflag=()
if command -v ab >/dev/null; then abflag=(-ab); else echo "ab not installed (apache2-utils): no ab comparison"; fi
if command -v curl >/dev/null; then abflag+=(-curl -curl-fresh); else echo "curl not installed: no curl comparison"; fi
echo "ulimit -n: $(ulimit -n); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for urls in ${URLS:-path query}; do
	echo "== ${SHAPE:-users} shape, $urls-shaped URLs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
	"$work/benchwatch" -bin "$bins" -runs "$runs" -n "$counts" -shape "${SHAPE:-users}" -urls "$urls" -state -repeat "${REPEAT:-3}" -floor -bare -epoll "${server[@]}" "${abflag[@]}"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "target: 10000 targets within 1.5x ab's and 1.0x curl's wall time (same server, same runs) and 96 MiB, every run"
