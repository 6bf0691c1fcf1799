#!/usr/bin/env bash
# bench-watch-100k.sh — `healthctl watch --once --state F --prom-file F`
# three times on one state file (a cron fleet's runs 1, 2 and 3, each
# reported apart) over 100,000 targets in the shapes people write (block
# entries, flow mappings with quoted URLs, comments, headers per target:
# benchwatch -shape users; SHAPE=block for the plainest block style),
# once in each of SHAPES (default "users:path users:query headers:query":
# URLs that differ by their path, then by a query string, then with a Host
# and an Authorization token of each entry's own), each
# its own address of 127.0.0.0/8 (127.1.1.1 …; ADDRS=100: over 100
# addresses across 127/8 instead),
# under `ulimit -n 1024` (soft and hard: Go cannot raise it), as released
# (static, stripped): wall time, CPU time (user+sys), peak RSS, the sweep's
# own duration, and how long the state file and the textfile took to write
# (atomically) with their sizes. Every target must pass. GCOFF=1 also runs
# the same binary with GOMEMLIMIT=off (the limit --once sets itself
# switched off), its rounds alternating with the default's.
#
# The server is nginx (one worker) listening on 0.0.0.0:PORT, which Linux
# answers for every 127/8 address; it allows 127.0.0.0/8 only (anything else
# gets 403) and stops with the script. Loopback traffic only; bounded
# (120 s a sweep).
#
# DOWN=1: every target at a port nothing listens on (a fleet failing at
# once, as when the prober's own network is down: every probe refused, the
# fleet rule holding the redeploys); every target must fail and each run
# exit 8 or 9, the sweep's own codes.
#
#   [SHAPES="users:path users:query headers:query"] [REPEAT=3] [ADDRS=N] [GCOFF=1] [DOWN=1] scripts/bench-watch-100k.sh [RUNS] [COUNT] [BASE]
#     (default 1 round of 3 runs, 100000; BASE: a git ref also built and
#      measured, its rounds alternating with this tree's, e.g. main)
#
# Target (the performance budget, SPEC §10): every run <= 30 s and
# <= 256 MiB, every target classified, never exit 2, state and textfile
# whole. The machine is shared: say the load with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
count=${2:-100000}
command -v nginx >/dev/null || { echo "bench-watch-100k.sh needs nginx (apt-get install nginx-light)" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
echo "building as released (scripts/build-released.sh)..."
scripts/build-released.sh "$work/healthctl"
go build -o "$work/benchwatch" ./scripts/benchwatch
bins="$work/healthctl"
base=${3:-}
if [ -n "$base" ]; then
	echo "building $base ($(git rev-parse --short "$base")) the same way..."
	mkdir "$work/base"
	git archive "$base" | tar -x -C "$work/base"
	"$work/base/scripts/build-released.sh" "$work/healthctl-base"
	bins="$work/healthctl-base,$bins"
fi
if [ -n "${GCOFF:-}" ]; then
	# exec keeps the measured process healthctl.
	printf '#!/bin/sh\nGOMEMLIMIT=off exec %q "$@"\n' "$work/healthctl" > "$work/healthctl-gomemlimit-off"
	chmod +x "$work/healthctl-gomemlimit-off"
	bins="$bins,$work/healthctl-gomemlimit-off"
fi
spread=(-spread)
if [ -n "${DOWN:-}" ]; then spread+=(-down); fi
if [ -n "${ADDRS:-}" ]; then spread=(-addrs "$ADDRS"); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $work/nginx.pid; error_log $work/error.log;
worker_rlimit_nofile 8192;
events { worker_connections 4096; }
http { access_log off; server { listen 0.0.0.0:$port backlog=4096; allow 127.0.0.0/8; deny all; location / { return 200 "ok\n"; } } }
CONF
nginx -c "$work/nginx.conf" -p "$work" & echo $! > "$work/server.pid"
for _ in $(seq 100); do curl -sf "http://127.3.4.5:$port/" >/dev/null 2>&1 && break; sleep 0.05; done
curl -sf "http://127.3.4.5:$port/" >/dev/null || { echo "nginx does not answer 127.3.4.5:$port" >&2; exit 1; }
echo "server: nginx (1 worker) on 0.0.0.0:$port (127/8 only); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
spreadtext="each target its own address, so ports are reused across them"
if [ -n "${ADDRS:-}" ]; then spreadtext="over $ADDRS addresses: $((count / ADDRS)) connections a run to each"; fi
echo "ephemeral ports: $(cat /proc/sys/net/ipv4/ip_local_port_range | tr '\t' -); $spreadtext"
(
	ulimit -n 1024
	echo "ulimit -n: $(ulimit -Sn) soft, $(ulimit -Hn) hard"
	for sh in ${SHAPES:-users:path users:query headers:query}; do
		echo "== ${sh%%:*} shape, ${sh##*:}-shaped URLs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
		"$work/benchwatch" -bin "$bins" -runs "$runs" -n "$count" -shape "${sh%%:*}" -urls "${sh##*:}" -server "127.0.0.1:$port" "${spread[@]}" -state -repeat "${REPEAT:-3}" -timeout 120s
	done
)
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "target: every run <= 30 s and <= 256 MiB, every target classified, state and textfile whole"
