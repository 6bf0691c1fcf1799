// An express service as people write them, drained by one of four
// libraries (LIB): terminus (@godaddy/terminus), terminator
// (http-terminator), stoppable, or close (a bare server.close()).
// drain-test's differential test runs it; its knobs are environment
// variables:
//   PORT            the app port (127.0.0.1)
//   ADMIN_PORT      serve /ready and /live there instead (optional)
//   PRE_DRAIN_MS    how long readiness is 503 before the server closes
//   SLOW_MS         how long /slow takes (default 1500; /slow?ms=N: N ms)
//   MODE            good, or a broken way to drain:
//     early      close at once on the signal (no pre-drain)
//     truncate   while draining, /app says Content-Length: 42 and sends 5 bytes
//     gone       while draining, /app answers 410
//     defaults   terminus with its defaults (it re-raises the signal)
//     nograce    terminator/stoppable with no grace: in-flight sockets destroyed
//     appclose   (with ADMIN_PORT) the app port closes at APP_CLOSE_MS while
//                the admin port keeps flipping correctly
'use strict';
const http = require('http');
const express = require('express');

const env = (k, d) => (process.env[k] === undefined || process.env[k] === '' ? d : process.env[k]);
const LIB = env('LIB', 'close');
const MODE = env('MODE', 'good');
const PORT = Number(env('PORT', '0'));
const ADMIN_PORT = Number(env('ADMIN_PORT', '0'));
const PRE = Number(env('PRE_DRAIN_MS', '0'));
const SLOW = Number(env('SLOW_MS', '1500'));
const APP_CLOSE = Number(env('APP_CLOSE_MS', '0'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let draining = false;
const health = express.Router();
health.get('/ready', (req, res) => (draining ? res.status(503).send('draining\n') : res.send('ready\n')));
health.get('/live', (req, res) => res.send('alive\n'));
health.get('/readiness', (req, res) => (draining ? res.status(503).send('draining\n') : res.send('ready\n')));
health.get('/healthcheck', (req, res) => res.send('alive\n'));
// curl's differential test judges --expect-json and --expect-header here:
// a JSON document, a header of the app's, one sent twice.
health.get('/status', (req, res) => {
  res.set('X-App-Status', 'ready');
  res.append('X-Check', ['first', 'second']);
  res.json({ status: 'ready', checks: { db: 'ok' }, version: 3 });
});

const app = express();
if (!ADMIN_PORT) app.use(health);
app.get('/app', (req, res) => {
  if (draining && MODE === 'truncate') {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '42' });
    res.end('hello');
    return;
  }
  if (draining && MODE === 'gone') return res.status(410).send('gone\n');
  res.send('hello from ' + LIB + '\n');
});
// The docs' examples: /readiness and /healthcheck, /api/items, /slow?ms=3000.
app.get('/api/items', (req, res) => res.json({ items: [1, 2, 3] }));
app.get('/slow', (req, res) => {
  const ms = Number(req.query.ms || SLOW);
  setTimeout(() => res.send('slow done ' + 'x'.repeat(4096) + '\n'), ms);
});

const server = http.createServer(app);
let admin = null;
if (ADMIN_PORT) {
  const a = express();
  a.use(health);
  admin = http.createServer(a).listen(ADMIN_PORT, '127.0.0.1');
}

function closeAdmin() {
  return new Promise((r) => (admin ? admin.close(() => r()) : r()));
}

if (LIB === 'terminus') {
  const { createTerminus, HealthCheckError } = require('@godaddy/terminus');
  // /health/deps is a terminus health check over the app's dependencies,
  // as services write them (probe_conditions_terminus.txtar): DEPS=up
  // (the default), degraded (200, one dependency degraded), down (503,
  // terminus's error document naming the cause).
  // terminus answers its health checks 503 from the signal on: /ready is
  // one; /live stays the app's own route (a liveness that fails while
  // draining is a restart for Docker autoheal, ECS, Nomad, Consul).
  createTerminus(server, {
    signals: ['SIGTERM'],
    healthChecks: {
      '/ready': async () => {},
      '/health/deps': async () => {
        const deps = env('DEPS', 'up');
        if (deps === 'down') {
          throw new HealthCheckError('dependency down', { db: { status: 'down', message: 'connect ECONNREFUSED db.invalid:5432' } });
        }
        return { db: { status: 'up' }, cache: { status: deps === 'degraded' ? 'degraded' : 'up' } };
      },
    },
    beforeShutdown: () => { draining = true; return sleep(PRE); },
    timeout: 5000,
    useExit0: MODE !== 'defaults',
    onShutdown: () => closeAdmin(),
  });
} else if (LIB === 'terminator') {
  const { createHttpTerminator } = require('http-terminator');
  const t = createHttpTerminator({ server, gracefulTerminationTimeout: MODE === 'nograce' ? 50 : 5000 });
  process.on('SIGTERM', async () => {
    draining = true;
    await sleep(PRE);
    await t.terminate();
    await closeAdmin();
    process.exit(0);
  });
} else if (LIB === 'stoppable') {
  const stoppable = require('stoppable');
  stoppable(server, MODE === 'nograce' ? 0 : 5000);
  process.on('SIGTERM', async () => {
    draining = true;
    await sleep(PRE);
    server.stop(() => closeAdmin().then(() => process.exit(0)));
  });
} else {
  process.on('SIGTERM', async () => {
    if (MODE === 'early') {
      server.close(() => closeAdmin().then(() => process.exit(0)));
      return;
    }
    draining = true;
    if (MODE === 'appclose') {
      const closed = new Promise((r) => setTimeout(() => server.close(() => r()), APP_CLOSE));
      await sleep(PRE);
      await closed;
      await closeAdmin();
      process.exit(0);
    }
    await sleep(PRE);
    server.close(() => closeAdmin().then(() => process.exit(0)));
  });
}
server.listen(PORT, '127.0.0.1');
