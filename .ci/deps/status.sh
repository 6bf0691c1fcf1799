#!/usr/bin/env bash
# watch --listen's service scripts (testdata/script/watch_listen_status.txtar):
# a real headless Chromium renders the status page, and a real Prometheus
# (with promtool) scrapes /probe with blackbox_exporter's relabel config.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || need+=(prometheus)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
chromium --version
prometheus --version 2>&1 | head -1
promtool --version 2>&1 | head -1
