#!/usr/bin/env bash
# The real stacks drain-test's differential test (cmd/healthctl
# drain_truth_test.go) runs under its truth client: Debian's gunicorn
# (sync, gthread) + Flask, uvicorn + FastAPI, nginx, HAProxy, Caddy,
# Apache httpd, a JDK, Jetty 9.4 (jetty9's jars: drain_truth_jetty.txtar), runit, PM2 (testdata/stacks/drain-pm2), Next.js 16 (testdata/stacks/drain-next, built with next build), aiohttp, Tornado and Waitress, uWSGI (python3 plugin), tini and dumb-init (drain_wrapper_init.txtar), Puma (drain_puma.txtar), supervisor (drain_supervisord.txtar); npm's express with @godaddy/terminus, koa, fastify,
# http-terminator and stoppable (testdata/stacks/drain-node). Fails when
# any install fails: the test then fails in CI instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/../.."
if command -v apt-get >/dev/null 2>&1; then
  # Packaged daemons must not start (or fail to start) as they install.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    gunicorn python3-flask python3-uvicorn python3-fastapi \
    nginx haproxy caddy apache2 openjdk-17-jdk-headless tini dumb-init puma supervisor jetty9 runit \
    python3-aiohttp python3-tornado python3-waitress uwsgi uwsgi-plugin-python3
fi
for p in gunicorn nginx haproxy caddy apache2 java javac node npm tini dumb-init puma uwsgi supervisord runsvdir runsv; do
  command -v "$p" >/dev/null || { echo "drain-truth: $p is missing after the install" >&2; exit 1; }
done
/usr/bin/python3 -c 'import flask, fastapi, uvicorn, aiohttp, tornado, waitress' || { echo "drain-truth: flask/fastapi/uvicorn/aiohttp/tornado/waitress missing for /usr/bin/python3" >&2; exit 1; }
test -e /usr/share/java/jetty9-server.jar || { echo "drain-truth: Debian's jetty9 jars are missing" >&2; exit 1; }
test -e /usr/lib/uwsgi/plugins/python3_plugin.so || { echo "drain-truth: uWSGI's python3 plugin is missing" >&2; exit 1; }
cd testdata/stacks/drain-node
npm ci --no-audit --no-fund
# PM2 in front of drain-node's service (drain_truth_pm2.txtar): its own
# directory, so the node stacks above do not carry it.
cd ../drain-pm2
npm ci --no-audit --no-fund
# Next.js (drain_truth_next.txtar): npm ci, then next build, as users build
# before `next start`. A fresh build takes about 12 s on an idle 2-core
# machine (18 s loaded), 2 s again with its .next/cache; it is skipped when
# .next/BUILD_ID is newer than every source and the lock file, so a second
# run of this script costs npm ci alone (the script took 23 s so).
# NEXT_TELEMETRY_DISABLED: next build would otherwise send telemetry.
cd ../drain-next
npm ci --no-audit --no-fund
if [ ! -e .next/BUILD_ID ] || [ -n "$(find app lib instrumentation.js package.json package-lock.json -newer .next/BUILD_ID -print -quit)" ]; then
  NEXT_TELEMETRY_DISABLED=1 node_modules/.bin/next build
fi
test -e .next/BUILD_ID || { echo "drain-truth: next build left no testdata/stacks/drain-next/.next/BUILD_ID" >&2; exit 1; }
