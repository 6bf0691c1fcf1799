#!/usr/bin/env bash
# The integrations' tools (issue 25): promtool (Debian's prometheus package)
# for `promtool test rules` on the shipped alert rules, rpm for
# scripts/release-check.sh's `rpm -qpl` of the snapshot's .rpm, and the real
# shells' completion (bash-completion, fish) for completion_values.txtar,
# monitoring-plugins' check_http and check_curl for TestNagiosAgainstPlugins
# (-o nagios graded as they grade the same servers), and actionlint for
# TestActionLint, Debian's prometheus-blackbox-exporter for TestBlackboxOracle
# (the listener's /probe beside blackbox_exporter itself) and prometheus
# for the CI's Prometheus oracle. Fails loudly: a test that needs one of them
# fails in CI, never skips.
set -euo pipefail
need=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-blackbox-exporter >/dev/null 2>&1 || need+=(prometheus-blackbox-exporter)
command -v rpm >/dev/null 2>&1 || need+=(rpm)
command -v fish >/dev/null 2>&1 || need+=(fish)
[ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion)
[ -x /usr/lib/nagios/plugins/check_http ] || need+=(monitoring-plugins-basic)
[ -x /usr/lib/nagios/plugins/check_curl ] || need+=(monitoring-plugins-standard)
# check_curl is linked against liburiparser, which Debian lists only as a
# Recommends: with --no-install-recommends the plugin is there and cannot
# start (exit 127, "liburiparser.so.1: cannot open shared object file").
if ! [ -x /usr/lib/nagios/plugins/check_curl ] || ldd /usr/lib/nagios/plugins/check_curl | grep -q 'not found'; then
  need+=(liburiparser1)
fi
if [ ${#need[@]} -gt 0 ]; then
  # Packaged daemons (prometheus, the blackbox exporter) must not start as
  # they install: the tests run their binaries on loopback ports of their own.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
prometheus-blackbox-exporter --version 2>&1 | head -1
promtool --version 2>&1 | head -1
rpm --version
fish --version
test -f /usr/share/bash-completion/bash_completion
# The plugins' -V exits 3 (UNKNOWN), as every plugin's version does: the
# programs must be there, start (not 126/127: a library missing), and print
# their version.
for plugin in check_http check_curl; do
  test -x "/usr/lib/nagios/plugins/$plugin"
  rc=0
  "/usr/lib/nagios/plugins/$plugin" -V || rc=$?
  if [ "$rc" -ge 126 ]; then
    echo "$plugin does not start (exit $rc)" >&2
    exit 1
  fi
done
# actionlint for TestActionLint (the Action's workflow use), built through
# the module proxy into GOPATH/bin, where the test looks (~15 s).
gobin=$(go env GOPATH)/bin
[ -x "$gobin/actionlint" ] || go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
"$gobin/actionlint" -version | head -1
