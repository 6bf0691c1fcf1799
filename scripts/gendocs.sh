#!/usr/bin/env bash
# Writes the man pages (gzipped) and shell completions that releases ship
# into ${1:-.release}: man/*.1.gz, completions/healthctl.{bash,zsh,fish,ps1}.
# goreleaser runs it as a before hook. The generator is built with the
# gendocs tag, so cobra's doc package never links into healthctl itself.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.release}
rm -rf "$out"
go run -tags gendocs ./cmd/healthctl __gendocs "$out"
gzip -9n "$out"/man/*.1
