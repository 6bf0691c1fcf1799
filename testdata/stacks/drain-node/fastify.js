// A fastify service for drain-test's differential test (PORT, PRE_DRAIN_MS,
// SLOW_MS; /slow?ms=N takes N ms). MODE=good (the default): on SIGTERM
// readiness answers 503 for PRE_DRAIN_MS, then fastify.close() stops
// accepting and waits for the requests in flight (idle kept-alive
// connections closed: forceCloseConnections 'idle', v4's default), exit 0.
// MODE=early: close() at the signal, no pre-drain.
'use strict';
const fastify = require('fastify')({ logger: false });

const env = (k, d) => (process.env[k] === undefined || process.env[k] === '' ? d : process.env[k]);
const MODE = env('MODE', 'good');
const PORT = Number(env('PORT', '0'));
const PRE = Number(env('PRE_DRAIN_MS', '0'));
const SLOW = Number(env('SLOW_MS', '1500'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let draining = false;

fastify.get('/ready', async (req, reply) => {
  if (draining) {
    reply.code(503);
    return 'draining\n';
  }
  return 'ready\n';
});
fastify.get('/live', async () => 'alive\n');
fastify.get('/app', async () => 'hello from fastify\n');
fastify.get('/slow', async (req) => {
  await sleep(Number(req.query.ms || SLOW));
  return 'slow done ' + 'x'.repeat(4096) + '\n';
});
process.on('SIGTERM', async () => {
  if (MODE === 'good') {
    draining = true;
    await sleep(PRE);
  }
  await fastify.close();
  process.exit(0);
});
fastify.listen({ port: PORT, host: '127.0.0.1' });
