#!/usr/bin/env bash
# fuzz.sh — run every fuzz target of the module for SECONDS each, one after
# the other, and say per target how long it ran, how many new interesting
# inputs it found and whether it failed (a failing input is written by Go
# under the package's testdata/fuzz/FuzzX/, where plain `go test` replays it
# from then on: commit it with the fix).
#
#   scripts/fuzz.sh [SECONDS] [PATTERN]   (default 30, every target)
#
# FUZZ_PARALLEL sets the fuzz workers per target (default 1: the machine is
# shared). The seed corpora (f.Add and testdata/fuzz) run with every
# `go test`; this explores beyond them. Pure in-process: no network.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
pattern=${2:-.}
par=${FUZZ_PARALLEL:-1}
cache=$(go env GOCACHE)/fuzz/$(go list -m)
fails=0
printf '%-32s %-18s %6s %10s  %s\n' package target secs new result
for pkg in $(go list ./...); do
	targets=$(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' | grep -E "$pattern" || true)
	for t in $targets; do
		rel=${pkg#$(go list -m)}
		before=$(ls "$cache$rel/$t" 2>/dev/null | wc -l)
		log=$(mktemp)
		start=$(date +%s)
		if go test -run '^$' -fuzz "^$t\$" -fuzztime "${secs}s" -parallel "$par" "$pkg" >"$log" 2>&1; then
			result=ok
		else
			result="FAIL (see $log)"
			fails=$((fails + 1))
		fi
		took=$(($(date +%s) - start))
		after=$(ls "$cache$rel/$t" 2>/dev/null | wc -l)
		execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
		printf '%-32s %-18s %6s %10s  %s (%s execs)\n' "${rel#/}" "$t" "$took" "$((after - before))" "$result" "${execs:-?}"
		[ "$result" = ok ] && rm -f "$log"
	done
done
exit $((fails > 0))
