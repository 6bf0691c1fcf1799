#!/usr/bin/env bash
# A snapshot release on this machine, checked: goreleaser release --snapshot
# --clean --skip=publish, then every archive (6 targets), the .deb and .rpm
# for linux amd64/arm64 and checksums.txt must exist and verify; archives and
# packages must carry LICENSE, README, completions and man pages for every
# command (the packages also the systemd timer and the page's unit, the
# example targets file and the alert rules; each its distributions' paths:
# zsh under vendor-completions in the .deb, site-functions in the .rpm;
# Debian's copyright), read with dpkg-deb and rpm -qpl; the linux/amd64
# binary must be static and print its version with a commit.
# goreleaser is installed through the Go module proxy when absent (a first
# build takes minutes). Prints the time it took. Exit 0 only when all holds.
set -euo pipefail
trap 'echo "release-check: FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
start=$SECONDS
GORELEASER_VERSION=v2.15.1
fail() { echo "release-check: FAIL: $*" >&2; exit 1; }

gr=$(command -v goreleaser || true)
if [ -z "$gr" ]; then
  gobin=$(go env GOBIN); gobin=${gobin:-$(go env GOPATH)/bin}
  if [ ! -x "$gobin/goreleaser" ]; then
    echo "== installing goreleaser $GORELEASER_VERSION through the module proxy (minutes, once)"
    (cd / && go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION")
  fi
  gr=$gobin/goreleaser
fi
"$gr" --version 2>/dev/null | grep -m1 -i 'gitversion\|version' || true

# goreleaser reads the git state (commit, date) only when a remote is
# configured; a checkout without one gets the project's URL for this run
# only, through git's environment (the repository's config is not touched).
if [ -z "$(git remote)" ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/healthctl/healthctl.git
fi
echo "== goreleaser release --snapshot --clean --skip=publish"
"$gr" release --snapshot --clean --skip=publish --parallelism "${RELEASE_PARALLELISM:-2}" >dist.log 2>&1 \
  || { tail -40 dist.log; fail "goreleaser failed (dist.log)"; }
mv dist.log dist/goreleaser.log

echo "== artifacts"
cd dist
ls -1
[ -s checksums.txt ] || fail "no checksums.txt"
sha256sum --quiet -c checksums.txt || fail "checksums.txt does not verify"
for t in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64 windows_arm64; do
  case $t in windows*) ext=zip ;; *) ext=tar.gz ;; esac
  a=$(ls healthctl_*_"$t".$ext 2>/dev/null | head -1 || true)
  [ -n "$a" ] || fail "no archive for $t"
  grep -q " $a\$" checksums.txt || fail "$a not in checksums.txt"
  if [ $ext = zip ]; then list=$(unzip -Z1 "$a"); else list=$(tar -tzf "$a"); fi
  for want in LICENSE README.md completions/healthctl.bash completions/healthctl.zsh \
              completions/healthctl.fish completions/healthctl.ps1 man/healthctl.1.gz man/healthctl-probe.1.gz; do
    grep -qx "$want" <<<"$list" || fail "$a lacks $want"
  done
  case $t in windows*) grep -qx healthctl.exe <<<"$list" ;; *) grep -qx healthctl <<<"$list" ;; esac || fail "$a lacks the binary"
  echo "ok $a"
done
for arch in amd64 arm64; do
  deb=$(ls healthctl_*_"$arch".deb 2>/dev/null | head -1 || true)
  [ -n "$deb" ] || fail "no .deb for $arch"
  case $arch in amd64) rarch=x86_64 ;; arm64) rarch=aarch64 ;; esac
  rpm=$(ls healthctl-*."$rarch".rpm 2>/dev/null | head -1 || true)
  [ -n "$rpm" ] || fail "no .rpm for $arch"
  grep -q " $deb\$" checksums.txt && grep -q " $rpm\$" checksums.txt || fail "packages not in checksums.txt"
  echo "ok $deb, $rpm"
done
# What the .deb installs (dpkg-deb is there on Debian/Ubuntu; elsewhere the
# data archive is read with ar + tar).
deb=$(ls healthctl_*_amd64.deb 2>/dev/null | head -1 || true)
if command -v dpkg-deb >/dev/null; then
  files=$(dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|')
else
  tmp=$(mktemp -d); (cd "$tmp" && ar x "$OLDPWD/$deb"); files=$(tar -tf "$tmp"/data.tar.* | sed 's|^\./|/|'); rm -rf "$tmp"
fi
for want in /usr/bin/healthctl /usr/share/bash-completion/completions/healthctl /usr/share/zsh/vendor-completions/_healthctl \
            /usr/share/fish/vendor_completions.d/healthctl.fish /usr/share/man/man1/healthctl.1.gz /usr/share/man/man1/healthctl-watch.1.gz \
            /usr/share/man/man1/healthctl-completion.1.gz /usr/share/man/man1/healthctl-completion-zsh.1.gz \
            /usr/lib/systemd/system/healthctl-watch.service /usr/lib/systemd/system/healthctl-watch.timer /usr/share/doc/healthctl/LICENSE \
            /usr/share/doc/healthctl/copyright /usr/share/doc/healthctl/examples/targets.yaml /usr/share/doc/healthctl/examples/healthctl-alerts.yml; do
  grep -qx "$want" <<<"$files" || fail "$deb does not install $want"
done
# A man page for every command the binary has (completion's included).
for c in $("$OLDPWD"/dist/healthctl_linux_amd64*/healthctl __complete "" 2>/dev/null | grep -v '^:' | cut -f1 | grep -v '^help$'); do
  grep -qx "/usr/share/man/man1/healthctl-$c.1.gz" <<<"$files" || fail "$deb has no man page for $c"
done
# The unit it installs is the one docs/watch.md shows (packaging/systemd/).
if command -v dpkg-deb >/dev/null; then
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/lib/systemd/system/healthctl-watch.service | cmp -s - ../packaging/systemd/deb/healthctl-watch.service \
    || fail "$deb's healthctl-watch.service is not packaging/systemd/deb/healthctl-watch.service"
fi
echo "ok $deb installs the binary, completions, man pages, the timer and its unit, the examples, copyright"
# What the .rpm installs: rpm is in Debian's archive (apt-get install rpm;
# .ci/deps/integrations.sh installs it in CI).
command -v rpm >/dev/null || fail "rpm not installed (apt-get install rpm): the .rpm cannot be inspected"
rpm=$(ls healthctl-*.x86_64.rpm 2>/dev/null | head -1 || true)
rfiles=$(rpm -qlp "$rpm" 2>/dev/null)
for want in /usr/bin/healthctl /usr/share/zsh/site-functions/_healthctl /usr/share/bash-completion/completions/healthctl \
            /usr/share/fish/vendor_completions.d/healthctl.fish /usr/share/man/man1/healthctl-completion.1.gz \
            /usr/lib/systemd/system/healthctl-watch.service /usr/share/doc/healthctl/examples/targets.yaml \
            /usr/share/doc/healthctl/examples/healthctl-alerts.yml /usr/share/licenses/healthctl/LICENSE; do
  grep -qx "$want" <<<"$rfiles" || fail "$rpm does not install $want"
done
if grep -q vendor-completions <<<"$rfiles"; then fail "$rpm installs zsh's Debian path (vendor-completions)"; fi
echo "ok $rpm installs zsh completion under site-functions, the unit, the examples"
# The Go test that inspects the same snapshot (cmd/healthctl TestReleaseSnapshotPackages).
(cd .. && go test ./cmd/healthctl -count=1 -run 'TestReleaseSnapshotPackages|TestPackagesPerDistribution|TestSystemdUnitsAreThePages') || fail "package tests"

echo "== the linux/amd64 binary"
bin=$(ls -d healthctl_linux_amd64*/healthctl 2>/dev/null | head -1 || true)
[ -x "$bin" ] || fail "no linux/amd64 binary in dist/"
file "$bin" | grep -q 'statically linked' || fail "not static: $(file "$bin")"
if ldd "$bin" >/dev/null 2>&1; then fail "ldd finds shared libraries in $bin"; fi
"$bin" version
"$bin" version | grep -q '^ *commit *[0-9a-f]\{7,\}' || fail "no commit in healthctl version"
"$bin" --version >/dev/null || fail "--version failed"
echo "release-check: ok in $((SECONDS - start))s"
