#!/usr/bin/env bash
# bench-watch.sh — one `healthctl watch --once` sweep over 1,000 and 10,000
# loopback targets (one Go fixture serving 200 on one loopback port, each
# target its own name and path): wall time and peak RSS of healthctl, with
# the default --concurrency and the shell's default `ulimit -n`, plus its CPU
# time (steadier than wall on a shared machine) and the sweep's own duration.
# Loopback only; every sweep is bounded (60 s) and the fixture stops with it.
#
#   scripts/bench-watch.sh [RUNS] [COUNTS] [BASE]
#     (default 3 runs, 1000,10000; BASE: a git ref also built and measured,
#      its runs alternating with this tree's, e.g. main)
#
# Minimum (issue 8): < 3 s and < 150 MiB at 10,000; target:
# 2 s and 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
counts=${2:-1000,10000}
base=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building release-like binary (CGO_ENABLED=0, -trimpath, -s -w)..."
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/healthctl" ./cmd/healthctl
bins="$work/healthctl"
if [ -n "$base" ]; then
	echo "building $base ($(git rev-parse --short "$base")) the same way..."
	mkdir "$work/base"
	git archive "$base" | tar -x -C "$work/base"
	(cd "$work/base" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/healthctl-base" ./cmd/healthctl)
	bins="$work/healthctl-base,$bins"
fi
go build -o "$work/benchwatch" ./scripts/benchwatch
echo "ulimit -n: $(ulimit -n); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/benchwatch" -bin "$bins" -runs "$runs" -n "$counts"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "minimum: < 3s and < 150 MiB at 10000 targets; target: 2s and 64 MiB"
