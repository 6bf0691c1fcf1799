#!/usr/bin/env bash
# prom-listen-oracle.sh — a real Prometheus (Debian's `prometheus`) scrapes
# COUNT loopback targets that answer in DELAY through `healthctl watch
# --listen`'s /probe, with blackbox_exporter's README relabelling, every 5 s
# for SECONDS (scripts/promoracle); it fails unless every scrape was up
# (no up == 0: each answered within its timeout) and every probe passed.
# The same Prometheus, in the same run, scrapes the same targets with the
# same module through Debian's prometheus-blackbox-exporter (when it is
# installed: .ci/deps/integrations.sh installs it), and both exporters'
# counts are printed: scrapes, up == 0, probe_success == 0. Only
# healthctl's are judged: blackbox_exporter is the yardstick, and a scrape
# it loses on a loaded 2-core runner (both exporters, Prometheus and the
# targets share it) is reported as measured, not failed.
# Loopback only; bounded (SECONDS + 2 minutes). A CI step can run it as it
# is (it needs `prometheus` on the PATH: apt-get install prometheus).
#
#   scripts/prom-listen-oracle.sh [COUNT] [SECONDS] [DELAY] [RULES]
#     (default 1000, 60, 100ms; RULES, e.g. docs/healthctl-alerts.yml: then
#     the watcher is killed after the check and HealthctlWatcherDown must
#     fire in that Prometheus, evaluating the rules file as it is)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
secs=${2:-60}
delay=${3:-100ms}
rules=${4:-}
command -v prometheus >/dev/null || { echo "prom-listen-oracle.sh needs prometheus (apt-get install prometheus)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -o "$work/healthctl" ./cmd/healthctl
go build -o "$work/promoracle" ./scripts/promoracle
echo "$(prometheus --version 2>&1 | head -1); $(nproc) cores"
bbx=$(command -v prometheus-blackbox-exporter || true)
if [ -n "$bbx" ]; then
	echo "$("$bbx" --version 2>&1 | head -1), scraped beside healthctl"
else
	echo "prometheus-blackbox-exporter not installed: healthctl alone (apt-get install prometheus-blackbox-exporter)"
fi
"$work/promoracle" -bin "$work/healthctl" ${bbx:+-blackbox "$bbx"} -n "$count" -duration "${secs}s" -delay "$delay" -dir "$work" ${rules:+-rules "$rules"} || {
	echo "--- healthctl.log"; tail -20 "$work/healthctl.log"; echo "--- prometheus.log"; tail -20 "$work/prometheus.log"
	[ -f "$work/blackbox_exporter.log" ] && { echo "--- blackbox_exporter.log"; tail -20 "$work/blackbox_exporter.log"; }
	exit 1; }
