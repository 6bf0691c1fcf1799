#!/usr/bin/env bash
# The integrations' tools (issue 25): promtool (Debian's prometheus package)
# for `promtool test rules` on the shipped alert rules, rpm for
# scripts/release-check.sh's `rpm -qpl` of the snapshot's .rpm, and the real
# shells' completion (bash-completion, fish) for completion_values.txtar,
# monitoring-plugins' check_http and check_curl for TestNagiosAgainstPlugins
# (-o nagios graded as they grade the same servers), and actionlint for
# TestActionLint. Fails loudly: a test that needs one of them
# fails in CI, never skips.
set -euo pipefail
need=()
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v rpm >/dev/null 2>&1 || need+=(rpm)
command -v fish >/dev/null 2>&1 || need+=(fish)
[ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion)
[ -x /usr/lib/nagios/plugins/check_http ] || need+=(monitoring-plugins-basic)
[ -x /usr/lib/nagios/plugins/check_curl ] || need+=(monitoring-plugins-standard)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
promtool --version 2>&1 | head -1
rpm --version
fish --version
test -f /usr/share/bash-completion/bash_completion
# The plugins' -V exits 3 (UNKNOWN), as every plugin's version does: the
# programs must be there, and their version is printed.
for plugin in check_http check_curl; do
  test -x "/usr/lib/nagios/plugins/$plugin"
  "/usr/lib/nagios/plugins/$plugin" -V | head -1 || true
done
# actionlint for TestActionLint (the Action's workflow use), built through
# the module proxy into GOPATH/bin, where the test looks (~15 s).
gobin=$(go env GOPATH)/bin
[ -x "$gobin/actionlint" ] || go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
"$gobin/actionlint" -version | head -1
