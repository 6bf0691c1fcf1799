#!/usr/bin/env node
// A drain fixture in Node (no packages), for healthctl drain-test's scripts.
//
// usage: node drainsvc.js --addr 127.0.0.1:PORT [--mode good|cutchunked|exitnow]
//                         [--pidfile FILE] [--slow SECONDS]
//
// /ready, /live, and /slow: a chunked body (no Content-Length), a row every
// 50 ms for --slow seconds. On SIGTERM:
//   good        readiness 503, serve for PRE_DRAIN_MS, server.close(),
//               in-flight requests finish, exit 0;
//   cutchunked  the same pre-drain, then process.exit(0) at once: the
//               chunked bodies in flight end without their last chunk;
//   exitnow     readiness 503, then process.exit(0) after PRE_DRAIN_MS
//               with the listener open (no close, no wait).
'use strict';
const http = require('http');
const fs = require('fs');

const args = {mode: 'good', slow: 1};
for (let i = 2; i < process.argv.length; i += 2) {
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
}
const [host, port] = args.addr.split(/:(?=[0-9]+$)/);
if (host !== '127.0.0.1' && host !== '::1') {
  console.error('drainsvc.js: --addr must be loopback');
  process.exit(2);
}
const preDrain = Number(process.env.PRE_DRAIN_MS || 5000);
let ready = true;

const server = http.createServer((req, res) => {
  if (req.url === '/ready') {
    res.writeHead(ready ? 200 : 503, {'Content-Type': 'application/json'});
    res.end(ready ? '{"status":"ready"}\n' : '{"status":"not ready"}\n');
  } else if (req.url === '/live') {
    res.writeHead(200, {'Content-Type': 'application/json'});
    res.end('{"status":"alive"}\n');
  } else if (req.url === '/slow') {
    res.writeHead(200, {'Content-Type': 'text/csv'});
    let n = Math.round(Number(args.slow) * 20);
    const tick = setInterval(() => {
      res.write('drain-test,export,row\n'.repeat(50));
      if (--n <= 0) {
        clearInterval(tick);
        res.end();
      }
    }, 50);
  } else {
    res.writeHead(404);
    res.end('not found\n');
  }
});

server.listen(Number(port), host, () => {
  if (args.pidfile) {
    fs.writeFileSync(args.pidfile + '.tmp', process.pid + '\n');
    fs.renameSync(args.pidfile + '.tmp', args.pidfile);
  }
});

process.on('SIGTERM', () => {
  ready = false;
  setTimeout(() => {
    if (args.mode === 'cutchunked' || args.mode === 'exitnow') {
      process.exit(0);
    }
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  }, preDrain);
});
