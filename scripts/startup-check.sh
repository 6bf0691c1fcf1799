#!/usr/bin/env bash
# startup-check.sh — CI's start-up guard: `healthctl probe URL` against the
# design floor (scripts/benchbare: a bare Go GET with cobra, viper, color, pgconn
# and tablewriter linked), both built as released (scripts/build-released.sh), run
# interleaved (scripts/benchcmd) against one loopback HTTP server (nginx
# when installed, else python3's http.server). It fails when healthctl's
# median exceeds BOUND times the floor's in wall time AND in CPU time
# (user+sys): a real regression moves both, while a noisy neighbour moves
# wall time alone. The budget itself is 1.1x (scripts/bench-probe.sh 300
# measures it); the bound is generous so that noise cannot fail CI.
# Loopback only; bounded runs; installs nothing.
#
#   scripts/startup-check.sh [RUNS] [BOUND]     (default 40 rounds, 1.5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-40}
bound=${2:-1.5}
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
scripts/build-released.sh "$work/healthctl"
scripts/build-released.sh "$work/benchbare" ./scripts/benchbare
go build -o "$work/benchcmd" ./scripts/benchcmd
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/www"; echo ok > "$work/www/health"; chmod -R a+rX "$work"
if command -v nginx >/dev/null; then
	server=nginx
	cat > "$work/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 256; }
http { access_log off; server { listen 127.0.0.1:$port; root $work/www; } }
CONF
	nginx -c "$work/nginx.conf" -p "$work" & echo $! > "$work/server.pid"
else
	server="python3 http.server"
	(cd "$work/www" && exec $py -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) & echo $! > "$work/server.pid"
fi
url="http://127.0.0.1:$port/health"
for _ in $(seq 100); do "$work/benchbare" "$url" >/dev/null 2>&1 && break; sleep 0.05; done
# The probe must pass, or the timing measures an error path.
"$work/healthctl" probe "$url" >/dev/null || { echo "startup-check: healthctl probe $url did not pass" >&2; exit 1; }
out=$("$work/benchcmd" -n "$runs" -- "$work/healthctl probe $url" "$work/benchbare $url")
echo "$out"
# The first command's line: cpu_ratio and wall_ratio are its last two columns.
read -r cpu wall < <(echo "$out" | awk 'NR==2 {c=$(NF-1); w=$NF; sub(/x$/,"",c); sub(/x$/,"",w); print c, w}')
echo "start-up ($server, $runs rounds): healthctl probe / design floor = ${wall}x wall, ${cpu}x CPU (bound ${bound}x; budget 1.1x)"
if awk -v c="$cpu" -v w="$wall" -v b="$bound" 'BEGIN { exit !(c > b && w > b) }'; then
	echo "startup-check: healthctl probe starts more than ${bound}x slower than the design floor in wall and CPU time: something heavy now runs before the first byte (package init, flag or config work, the probe path)" >&2
	exit 1
fi
