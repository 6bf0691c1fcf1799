#!/usr/bin/env bash
# bench-listen-blackbox.sh — `healthctl watch --listen`'s /probe against
# Debian's prometheus-blackbox-exporter, paired (scripts/benchblackbox):
# the same loopback targets (200 at once), the same module (http_2xx), the
# same load (CLIENTS keep-alive clients sending COUNT /probe requests a
# round, scrape timeout 5 s), ROUNDS rounds of each, interleaved (ABBA…);
# probes a second and CPU a probe (the exporter's user+system time) of
# each round, their medians and the ratio. healthctl as released (static,
# stripped), at --probe-rate 1000000 (the rate limit out of the way).
# Every answer must be probe_success 1. Loopback only; bounded.
#
#   scripts/bench-listen-blackbox.sh [COUNT] [CLIENTS] [ROUNDS]
#     (default 4000, 32, 6)
#
# The machine is shared: say the load with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v prometheus-blackbox-exporter >/dev/null || { echo "bench-listen-blackbox.sh needs prometheus-blackbox-exporter (apt-get install prometheus-blackbox-exporter)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "building as released (scripts/build-released.sh)..."
scripts/build-released.sh "$work/healthctl"
go build -o "$work/benchblackbox" ./scripts/benchblackbox
echo "$(prometheus-blackbox-exporter --version 2>&1 | head -1)"
"$work/benchblackbox" -bin "$work/healthctl" -blackbox "$(command -v prometheus-blackbox-exporter)" -n "${1:-4000}" -c "${2:-32}" -rounds "${3:-6}"
