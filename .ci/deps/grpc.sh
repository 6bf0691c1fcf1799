#!/usr/bin/env bash
# The real gRPC servers of the grpc/grpcs scripts (testdata/script/*grpc*):
# Python's grpcio from Debian (for /usr/bin/python3) and Node's @grpc/grpc-js
# with grpc-health-check from npm into testdata/stacks/grpc-node (grpc-go's
# own health server is a Go test dependency: nothing to install).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! /usr/bin/python3 -c 'import grpc' >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-grpcio
fi
/usr/bin/python3 -c 'import grpc; print("python3-grpcio", grpc.__version__)'
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm
fi
(cd testdata/stacks/grpc-node && npm ci --no-audit --no-fund --loglevel=error)
node -e 'require("./testdata/stacks/grpc-node/node_modules/@grpc/grpc-js"); require("./testdata/stacks/grpc-node/node_modules/grpc-health-check"); console.log("node grpc-js + grpc-health-check ok")'
