#!/usr/bin/env bash
# bench-watch-listen.sh — a long-running `healthctl watch` against
# `--once` over the same loopback fleet (scripts/benchlisten): COUNT block
# entries over 100 addresses of 127/8, each answered 200 by the bench's
# own server; `--once --state --prom-file` (peak RSS), then a long-running
# `watch --state` and the same with `--listen`, each for SECONDS at
# INTERVAL (peak RSS, VmHWM, the median of the last half; with --listen,
# /status.json whole and one page of 1,000). As released (static,
# stripped). Loopback only; bounded (SECONDS + 60 s a run).
#
#   [RUNS=once,long,listen] scripts/bench-watch-listen.sh [COUNT] [SECONDS] [INTERVAL]
#     (default 10000, 120, 10s; RUNS: which runs, in that order; each long
#     run also reports its CPU time)
#
# The machine is shared: say the load with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-10000}
secs=${2:-120}
interval=${3:-10s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building as released (scripts/build-released.sh)..."
scripts/build-released.sh "$work/healthctl"
go build -o "$work/benchlisten" ./scripts/benchlisten
echo "$(nproc) cores; ulimit -n $(ulimit -n)"
"$work/benchlisten" -bin "$work/healthctl" -n "$count" -duration "${secs}s" -interval "$interval" -runs "${RUNS:-once,long,listen}" -dir "$work"
