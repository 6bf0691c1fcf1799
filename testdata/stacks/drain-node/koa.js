// A koa service for drain-test's differential test (PORT, PRE_DRAIN_MS,
// SLOW_MS; /slow?ms=N takes N ms). MODE=good (the default): on SIGTERM
// readiness answers 503 for PRE_DRAIN_MS, then server.close() stops
// accepting and waits for the requests in flight, and the process exits 0.
// MODE=early: server.close() at the signal, no pre-drain.
'use strict';
const http = require('http');
const Koa = require('koa');

const env = (k, d) => (process.env[k] === undefined || process.env[k] === '' ? d : process.env[k]);
const MODE = env('MODE', 'good');
const PORT = Number(env('PORT', '0'));
const PRE = Number(env('PRE_DRAIN_MS', '0'));
const SLOW = Number(env('SLOW_MS', '1500'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let draining = false;

const app = new Koa();
app.use(async (ctx) => {
  switch (ctx.path) {
    case '/ready':
      ctx.status = draining ? 503 : 200;
      ctx.body = draining ? 'draining\n' : 'ready\n';
      return;
    case '/live':
      ctx.body = 'alive\n';
      return;
    case '/app':
      ctx.body = 'hello from koa\n';
      return;
    case '/slow':
      await sleep(Number(ctx.query.ms || SLOW));
      ctx.body = 'slow done ' + 'x'.repeat(4096) + '\n';
      return;
    default:
      ctx.status = 404;
  }
});
const server = http.createServer(app.callback());
process.on('SIGTERM', async () => {
  if (MODE === 'good') {
    draining = true;
    await sleep(PRE);
  }
  server.close(() => process.exit(0));
  // Idle kept-alive connections would hold close() open: end them.
  server.closeIdleConnections();
});
server.listen(PORT, '127.0.0.1');
