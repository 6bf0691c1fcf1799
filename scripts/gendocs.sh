#!/usr/bin/env bash
# Writes the man pages (gzipped) and shell completions that releases ship
# into ${1:-.release}: man/*.1.gz, completions/healthctl.{bash,zsh,fish,ps1}.
# goreleaser runs it as a before hook. The generator is a program of its
# own (scripts/gendocs), so cobra's doc package never links into healthctl.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.release}
rm -rf "$out"
go run ./scripts/gendocs "$out"
gzip -9n "$out"/man/*.1
