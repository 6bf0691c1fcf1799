#!/usr/bin/env bash
# check-version.sh TAG IS_SNAPSHOT: a release's tag must be what VERSION
# records, so the GitHub Action pinned by this commit's SHA downloads this
# very release. goreleaser runs it before a build; snapshots pass.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=$1 snapshot=${2:-false}
[ "$snapshot" = true ] && exit 0
recorded=$(tr -d ' \r\n' <VERSION)
if [ "$recorded" != "$tag" ]; then
  echo "check-version: VERSION says $recorded, the tag is $tag: update VERSION in the tagged commit (the Action pinned by its SHA runs that release)" >&2
  exit 1
fi
