#!/usr/bin/env bash
# The real servers curl_diff_test.go (cmd/healthctl) runs the probe and curl
# against (and microsocks, Debian's SOCKS5 proxy, for
# probe_proxy_socks_real.txtar): each is started by the test itself on a 127.0.0.1 port with a
# configuration generated in its temporary directory, never as a service.
# The packages' own services must not start (no daemon on the machine's
# ports): a policy-rc.d that refuses every start is in place while they
# install, and removed after.
set -euo pipefail
pkgs=(curl caddy apache2 haproxy nginx unbound squid openssl nghttp2-server microsocks)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then
  echo "curl-trust: every package is installed"
  exit 0
fi
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  made_policy=1
fi
cleanup() { [ -n "$made_policy" ] && rm -f "$policy"; true; }
trap cleanup EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
for prog in curl caddy apache2 haproxy nginx unbound squid nghttpd microsocks; do
  if ! command -v "$prog" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$prog" ]; then
    echo "curl-trust: $prog is not installed after apt-get" >&2
    exit 1
  fi
done
