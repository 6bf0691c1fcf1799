#!/usr/bin/env bash
# kill.sh — watch's state file under SIGKILL and overlap: KILLS runs of
# `healthctl watch --once --state` over 20 loopback targets are SIGKILLed at
# random moments (every other one in its second half, where the state is
# written), the file checked after each (it parses; its sweep count never
# goes back); then OVERLAP runs start at once on the same file, and every
# one must be recorded. Loopback only; bounded (20 min).
#
#   scripts/kill.sh [KILLS] [OVERLAP]    (default 500, 20)
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/healthctl" ./cmd/healthctl
go build -o "$work/killsoak" ./scripts/killsoak
"$work/killsoak" -bin "$work/healthctl" -kills "${1:-500}" -overlap "${2:-20}"
