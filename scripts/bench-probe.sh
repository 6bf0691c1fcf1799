#!/usr/bin/env bash
# bench-probe.sh — `healthctl probe` side by side with `curl -sf` against the
# same loopback server: median/p90 wall time and peak RSS over many
# interleaved runs, plus the binary's size. Loopback only; bounded runs.
#
#   scripts/bench-probe.sh [RUNS]        (default 300)
#
# The server is nginx (as in SPEC.md §10) when installed
# (apt-get install nginx-light), else python3's http.server.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

echo "building release-like binary (CGO_ENABLED=0, -trimpath, -s -w)..."
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/healthctl" ./cmd/healthctl
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/bare" ./scripts/benchbare
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

echo "server: $server on $url; runs: $runs per command; $(nproc) cores"
"$work/benchcmd" -n "$runs" -- "curl -sf $url" "$work/healthctl probe $url"
echo "anchors: a bare Go GET with cobra+viper+color+tablewriter linked; a Go binary that does nothing"
"$work/benchcmd" -n "$runs" -- "$work/bare $url" "$work/healthctl version"
echo "binary size: $(du -k "$work/healthctl" | cut -f1) KiB ($(( $(stat -c %s "$work/healthctl") / 1048576 )) MiB, stripped)"
echo "targets: median <= 0.7x curl (minimum 1.5x), peak RSS <= 20 MiB, size <= 20 MiB"
