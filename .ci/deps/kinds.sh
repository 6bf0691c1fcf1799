#!/usr/bin/env bash
# The real servers of the redis://, postgres://, mysql:// and amqp://
# scripts (testdata/script/*redis*, *postgres*, *mysql*, *rabbitmq*;
# cmd/healthctl script_kinds_linux_test.go, script_mysql_linux_test.go,
# script_amqp_linux_test.go): Debian's redis-server (with redis-cli),
# postgresql (with pg_isready and psql, the peers the docs compare with),
# pgbouncer in front of it (pgbouncer_states.txtar), mariadb-server (with
# the mariadb client) and rabbitmq-server (with Erlang, ~100 MB; the AMQP
# client the docs compare with is amqp091-go, in the tests).
# Each is started by the test itself on a 127.0.0.1 port with its data in a
# temporary directory, never as a service: the packages' own services must
# not start while they install. Fails when any is missing afterwards.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || need+=(redis-server redis-tools)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null && command -v pg_isready >/dev/null 2>&1 && command -v psql >/dev/null 2>&1 \
  || need+=(postgresql postgresql-client)
command -v pgbouncer >/dev/null 2>&1 || need+=(pgbouncer)
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] && command -v epmd >/dev/null 2>&1 || need+=(rabbitmq-server)
command -v mariadbd >/dev/null 2>&1 && command -v mariadb-install-db >/dev/null 2>&1 && command -v mariadb >/dev/null 2>&1 \
  || need+=(mariadb-server mariadb-client)
if [ ${#need[@]} -gt 0 ]; then
  policy=/usr/sbin/policy-rc.d made_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    made_policy=1
  fi
  trap '[ -n "$made_policy" ] && rm -f "$policy"; true' EXIT
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
for prog in redis-server redis-cli pg_isready psql pgbouncer rabbitmq-server epmd mariadbd mariadb-install-db mariadb; do
  command -v "$prog" >/dev/null 2>&1 || { echo "kinds: $prog is missing after the install" >&2; exit 1; }
done
for prog in postgres initdb pg_ctl; do
  compgen -G "/usr/lib/postgresql/*/bin/$prog" >/dev/null || { echo "kinds: /usr/lib/postgresql/*/bin/$prog is missing after the install" >&2; exit 1; }
done
pg=$(ls -d /usr/lib/postgresql/*/bin/postgres | tail -1)
echo "kinds: $(redis-server --version | cut -d' ' -f1-3), $("$pg" --version), $(pgbouncer --version | head -1), rabbitmq-server $(dpkg-query -W -f '${Version}' rabbitmq-server 2>/dev/null), $(mariadbd --version)"
