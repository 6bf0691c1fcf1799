#!/usr/bin/env bash
# build-released.sh OUT [PKG] — builds PKG (default ./cmd/healthctl) the
# way a release does (.goreleaser.yaml: CGO_ENABLED=0, -trimpath, -s -w,
# the version from VERSION stamped in with -X) and installs it at OUT the
# way unpacking a release archive does: written in one sequential pass.
# The benchmarks compare binaries installed alike: the same bytes fresh
# from the linker started 0.5-0.7 ms slower here than after a copy (the
# kernel's page cache holds a linker-written file in smaller pieces, and a
# start maps thousands of its pages), which is most of a probe's budget.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
pkg=${2:-./cmd/healthctl}
tmp="$out.link.$$"
CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/healthctl/healthctl/internal/version.version=$(sed "s/^v//" VERSION)" \
	-o "$tmp" "$pkg"
cat "$tmp" > "$out.new.$$"
rm -f "$tmp"
chmod 755 "$out.new.$$"
mv -f "$out.new.$$" "$out"
