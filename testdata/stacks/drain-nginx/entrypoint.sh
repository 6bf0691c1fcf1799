#!/bin/sh
# nginx closes its listeners as soon as it is told to stop (QUIT: graceful,
# TERM: fast). The pre-drain is this entrypoint's: on TERM it makes
# readiness answer 503 (the file nginx.conf checks), keeps nginx serving
# for PRE_DRAIN_MS, then asks it for a graceful stop and waits for it.
# Usage: entrypoint.sh NGINX_CONF FLAG
rm -f "$2"
nginx -c "$1" &
pid=$!
drain() {
	: >"$2"
	sleep "$(awk "BEGIN { print ${PRE_DRAIN_MS:-0} / 1000 }")"
	kill -QUIT "$pid"
	wait "$pid"
	exit 0
}
trap 'drain "$@"' TERM
wait "$pid"
