#!/usr/bin/env bash
# bench-probe.sh — `healthctl probe` start-up against the design
# floor: the binary as released (scripts/build-released.sh: static,
# stripped, version-stamped, installed as an archive unpacks it) and
# scripts/benchbare (a bare Go GET with cobra, viper, color, pgconn and
# tablewriter linked) built and installed the same way, run as paired,
# interleaved runs (../shared/tools/paired.py) against one loopback server.
# Prints each command's median and its ratio to the floor (the last line's
# command), then curl's for reference, peak RSS and the binary's size.
# Loopback only; bounded runs; installs nothing.
#
#   scripts/bench-probe.sh [RUNS]        (default 150)
#
# The server is nginx (the reference server) when installed, else python3's
# http.server.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-150}
paired=${PAIRED:-../shared/tools/paired.py}
[ -f "$paired" ] || paired=/work/shared/tools/paired.py
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

echo "building as released (scripts/build-released.sh)..."
scripts/build-released.sh "$work/healthctl"
scripts/build-released.sh "$work/benchbare" ./scripts/benchbare
go build -o "$work/benchcmd" ./scripts/benchcmd

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
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
  (cd "$work/www" && exec python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) & echo $! > "$work/server.pid"
fi
url="http://127.0.0.1:$port/health"
for _ in $(seq 100); do curl -sf "$url" >/dev/null 2>&1 && break; sleep 0.05; done
curl -sf "$url" >/dev/null || { echo "server did not come up on $url" >&2; exit 1; }
# The probe must succeed, or the timing measures an error path.
"$work/healthctl" probe "$url" >/dev/null

echo "server: $server on $url; runs: $runs paired; $(nproc) cores"
echo "median_ms ratio_to_floor command"
out=$(python3 "$paired" "$runs" "$work/healthctl probe $url" "$work/healthctl version" "curl -sf $url" "$work/benchbare $url")
echo "$out"
ratio=$(echo "$out" | awk 'NR==1 {print $2}')
echo "floor ratio (healthctl probe / benchbare, paired medians): ${ratio}x  (target <= 1.15x)"
echo "peak RSS (benchcmd, 20 runs):"
"$work/benchcmd" -n 20 -- "$work/healthctl probe $url" "$work/benchbare $url" | grep -v '^ratio' | sed 's/^/  /'
echo "binary size: $(du -k "$work/healthctl" | cut -f1) KiB ($(( $(stat -c %s "$work/healthctl") / 1048576 )) MiB, stripped)"
