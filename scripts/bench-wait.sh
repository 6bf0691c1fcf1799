#!/usr/bin/env bash
# bench-wait.sh: wait-healthy's detection lag, from the moment a
# loopback fixture starts answering 200 (refused -> 200: starts listening;
# 503 -> 200: switches its answer) at a random moment to wait-healthy's exit,
# at default settings (500ms interval). Prints p50 and p90 per case.
#
# Targets: refused -> 200 median < 60 ms; 503 -> 200 median <= interval/2 + 50 ms.
#
# Usage: scripts/bench-wait.sh [RUNS]   (default 20; -v in BENCH_FLAGS logs each run)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/healthctl" ./cmd/healthctl
go build -o "$tmp/benchfixture" ./scripts/benchfixture
echo "wait-healthy detection lag, $runs runs per case, switch uniformly in [1s, 3s)"
"$tmp/benchfixture" -bin "$tmp/healthctl" -mode refused -runs "$runs" ${BENCH_FLAGS:-}
"$tmp/benchfixture" -bin "$tmp/healthctl" -mode 503 -runs "$runs" ${BENCH_FLAGS:-}
