#!/bin/sh
# httpd stops listening the moment it gets its graceful stop (WINCH). The
# pre-drain is this entrypoint's: on WINCH it makes readiness answer 503
# (DRAIN_FLAG, which httpd.conf checks), keeps httpd serving for
# PRE_DRAIN_MS, then passes WINCH on and waits for httpd to finish.
# Usage: entrypoint.sh HTTPD_CONF
# Not under $TMPDIR: httpd's workers (www-data) must reach the flag.
RUN=$(mktemp -d /tmp/healthctl-httpd.XXXXXX) && chmod 755 "$RUN" || exit 1
export RUN DRAIN_FLAG="$RUN/draining"
apache2 -f "$1" -DFOREGROUND &
pid=$!
drain() {
	: >"$DRAIN_FLAG"
	sleep "$(awk "BEGIN { print ${PRE_DRAIN_MS:-0} / 1000 }")"
	kill -WINCH "$pid"
	wait "$pid"
	rm -rf "$RUN"
	exit 0
}
trap drain WINCH
wait "$pid"
