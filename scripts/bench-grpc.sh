#!/usr/bin/env bash
# bench-grpc.sh — `healthctl probe grpc://` against grpc_health_probe, paired
# and interleaved (../shared/tools/paired.py), both asking grpc-go's real
# health server on loopback (scripts/benchgrpc) for SERVING. healthctl is
# built as released (scripts/build-released.sh); grpc_health_probe is built from the
# module proxy into a temporary directory (never committed) unless
# GRPC_HEALTH_PROBE names a binary. Prints each median and the ratio of
# healthctl's to grpc_health_probe's (target: <= 0.8x). Loopback only.
#
#   scripts/bench-grpc.sh [RUNS]        (default 150)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-150}
paired=${PAIRED:-../shared/tools/paired.py}
[ -f "$paired" ] || paired=/work/shared/tools/paired.py
work=$(mktemp -d)
trap 'kill $(cat "$work"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
scripts/build-released.sh "$work/healthctl"
go build -o "$work/benchgrpc" ./scripts/benchgrpc
ghp=${GRPC_HEALTH_PROBE:-}
if [ -z "$ghp" ]; then
  GOBIN="$work" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" github.com/grpc-ecosystem/grpc-health-probe@v0.4.62
  ghp="$work/grpc-health-probe"
fi
# Installed as healthctl is (one sequential write), whichever way it came.
cat "$ghp" > "$work/ghp"; chmod 755 "$work/ghp"; ghp="$work/ghp"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$work/benchgrpc" -addr "127.0.0.1:$port" -pidfile "$work/srv.pid" & echo $! > "$work/server.pid"
for _ in $(seq 100); do "$work/healthctl" probe "grpc://127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.05; done
"$work/healthctl" probe "grpc://127.0.0.1:$port"
"$ghp" -addr "127.0.0.1:$port"
echo "runs: $runs paired; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median_ms ratio command"
out=$(python3 "$paired" "$runs" "$work/healthctl probe grpc://127.0.0.1:$port" "$ghp -addr 127.0.0.1:$port")
echo "$out"
echo "ratio (healthctl / grpc_health_probe, paired medians): $(echo "$out" | awk 'NR==1 {print $2}')x  (target <= 0.8x)"
