#!/usr/bin/env bash
# soak.sh — a long-running `healthctl watch` over 1,000 loopback targets
# with faults (scripts/soakfixture: 200, 503, hangs, resets, an untrusted
# TLS certificate, refusals, connect timeouts) at a 1 s interval, with
# --state and --listen, for MINUTES. Samples the watch's own figures from
# /metrics (process_resident_memory_bytes, process_open_fds, go_goroutines)
# every SAMPLE seconds, then stops the watch with SIGTERM (it must exit 143
# with its summary line) and says whether the figures stayed flat. Probes in
# flight (hangs, connect timeouts) make every sample depend on where in a
# sweep it falls, so "start" is the highest sample of the WINDOW seconds
# after a warm-up of WARMUP seconds (the first sweeps fill the pools), "end"
# the highest of the last WINDOW seconds; flat means end RSS <= start +25%,
# end fds <= start + 32, end goroutines <= start + 10%.
# Loopback only; everything is bounded (MINUTES + 2 min) and stopped on exit.
#
#   scripts/soak.sh [MINUTES] [TARGETS]    (default 10, 1000)
#
# SAMPLE (default 30), WARMUP (default 60) and WINDOW (default 120) are
# seconds; run it niced on a
# shared machine: nice -n 19 scripts/soak.sh 10
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
n=${2:-1000}
sample=${SAMPLE:-30}
warmup=${WARMUP:-60}
window=${WINDOW:-120}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

echo "building (CGO_ENABLED=0, -trimpath)..."
CGO_ENABLED=0 go build -trimpath -o "$work/healthctl" ./cmd/healthctl || exit 1
go build -o "$work/soakfixture" ./scripts/soakfixture || exit 1

"$work/soakfixture" -n "$n" -targets "$work/targets.yaml" -max "$((minutes + 2))m" >"$work/fixture.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/targets.yaml" ] && break; sleep 0.1; done
[ -s "$work/targets.yaml" ] || { echo "soak: the fixture did not start"; cat "$work/fixture.log"; exit 1; }
cat "$work/fixture.log"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "ulimit -n: $(ulimit -n); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
timeout -s KILL "$((minutes * 60 + 120))" "$work/healthctl" watch --targets "$work/targets.yaml" \
	--interval 1s --state "$work/state.json" --listen "127.0.0.1:$port" -o json \
	>"$work/watch.jsonl" 2>"$work/watch.err" &
wpid=$!
pids+=($wpid)

# fig prints "RSS_BYTES FDS GOROUTINES" from /metrics.
fig() {
	curl -s --max-time 5 "http://127.0.0.1:$port/metrics" | awk '
		/^process_resident_memory_bytes / {r=$2} /^process_open_fds / {f=$2} /^go_goroutines / {g=$2}
		END {if (r == "") exit 1; printf "%d %d %d\n", r, f, g}'
}
for _ in $(seq 100); do fig >/dev/null 2>&1 && break; sleep 0.1; done

start=$(date +%s)
end=$((start + minutes * 60))
printf '%8s %10s %6s %11s %7s\n' elapsed rss_MiB fds goroutines sweeps
peak_r=0 peak_f=0 peak_g=0
while :; do
	now=$(date +%s)
	el=$((now - start))
	if f=$(fig); then
		read -r r fd g <<<"$f"
		sweeps=$(grep -c '"sweep":' "$work/watch.jsonl")
		printf '%7ss %10.1f %6d %11d %7d\n' "$el" "$(echo "$r / 1048576" | bc -l)" "$fd" "$g" "$sweeps"
		echo "$el $r $fd $g" >>"$work/samples"
		[ "$r" -gt "$peak_r" ] && peak_r=$r
		[ "$fd" -gt "$peak_f" ] && peak_f=$fd
		[ "$g" -gt "$peak_g" ] && peak_g=$g
	else
		echo "soak: /metrics did not answer at ${el}s"
	fi
	kill -0 "$wpid" 2>/dev/null || { echo "soak: the watch died"; cat "$work/watch.err"; exit 1; }
	[ "$now" -ge "$end" ] && break
	sleep $((sample < end - now ? sample : end - now))
done

kill -TERM "$wpid"
wait "$wpid"
code=$?
sweeps=$(grep -c '"sweep":' "$work/watch.jsonl")
skipped=$(grep -o '"skipped":[0-9]*' "$work/watch.jsonl" | awk -F: '{s+=$2} END {print s+0}')
echo "watch: exit $code after $sweeps sweeps ($skipped probes skipped while in flight); $(tail -1 "$work/watch.err")"
echo "reasons over the run: $(grep -o '"reason":"[a-z_]*"' "$work/watch.jsonl" | sort | uniq -c | awk '{split($2, a, "\""); printf "%s %s, ", a[4], $1}')"
total=$(tail -1 "$work/samples" | cut -d' ' -f1)
# winmax FROM TO: the highest rss, fds and goroutines sampled in [FROM, TO].
winmax() { awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b {if ($2 > r) r = $2; if ($3 > f) f = $3; if ($4 > g) g = $4} END {printf "%d %d %d\n", r, f, g}' "$work/samples"; }
read -r r0 f0 g0 <<<"$(winmax "$warmup" $((warmup + window)))"
read -r r1 f1 g1 <<<"$(winmax $((total - window)) "$total")"
printf 'start (highest of %ss-%ss): rss %.1f MiB, fds %d, goroutines %d\n' "$warmup" $((warmup + window)) "$(echo "$r0 / 1048576" | bc -l)" "$f0" "$g0"
printf 'end   (highest of %ss-%ss): rss %.1f MiB, fds %d, goroutines %d\n' $((total - window)) "$total" "$(echo "$r1 / 1048576" | bc -l)" "$f1" "$g1"
printf 'peak:                      rss %.1f MiB, fds %d, goroutines %d\n' "$(echo "$peak_r / 1048576" | bc -l)" "$peak_f" "$peak_g"
flat=yes
[ "$r1" -le $((r0 + r0 / 4)) ] || { flat=no; echo "RSS grew more than 25%"; }
[ $((f1 - f0)) -le 32 ] || { flat=no; echo "fds grew by more than 32"; }
[ $((g1 - g0)) -le $((g0 / 10 + 1)) ] || { flat=no; echo "goroutines grew by more than 10%"; }
[ "$code" = 143 ] || { flat=no; echo "SIGTERM: exit $code, want 143"; }
echo "flat: $flat"
[ "$flat" = yes ]
