// A real Node gRPC server for healthctl's scripts: @grpc/grpc-js with the
// health service of grpc-health-check (the packages in package.json).
//
//   node server.js ADDR_FILE [--status S] [--service NAME=S]... [--no-health] [--max-recv N]
//
// Listens on 127.0.0.1 port 0 (cleartext), writes "127.0.0.1:PORT" to
// ADDR_FILE once bound, and serves until SIGTERM/SIGINT. S is SERVING,
// NOT_SERVING or UNKNOWN; --status is the overall health ("" service,
// default SERVING); a service not named is unknown to the server; --max-recv
// N refuses request messages over N bytes (RESOURCE_EXHAUSTED, grpc-js's own).
'use strict';
const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const { HealthImplementation } = require('grpc-health-check');

const args = process.argv.slice(2);
const addrFile = args.shift();
if (!addrFile) {
  console.error('usage: server.js ADDR_FILE [--status S] [--service NAME=S]... [--no-health] [--max-recv N]');
  process.exit(2);
}
const statuses = { '': 'SERVING' };
let health = true;
const opts = {};
while (args.length > 0) {
  const a = args.shift();
  if (a === '--status') {
    statuses[''] = args.shift();
  } else if (a === '--service') {
    const [name, s] = args.shift().split('=');
    statuses[name] = s;
  } else if (a === '--no-health') {
    health = false;
  } else if (a === '--max-recv') {
    opts['grpc.max_receive_message_length'] = Number(args.shift());
  } else {
    console.error('server.js: unknown argument ' + a);
    process.exit(2);
  }
}

const server = new grpc.Server(opts);
if (health) {
  new HealthImplementation(statuses).addToServer(server);
}
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    console.error('server.js: ' + err.message);
    process.exit(1);
  }
  const tmp = addrFile + '.tmp';
  fs.writeFileSync(tmp, '127.0.0.1:' + port + '\n');
  fs.renameSync(tmp, addrFile);
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.forceShutdown() || process.exit(0));
}
