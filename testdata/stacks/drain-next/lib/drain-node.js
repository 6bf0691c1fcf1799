// How the app drains on SIGTERM (instrumentation.js imports it in the
// Node.js runtime only):
//   predrain  readiness 503 for PRE_DRAIN_MS, then Next.js's own graceful
//             stop: next start's SIGTERM handler (installed before this
//             hook runs) is taken off the signal and called once the
//             pre-drain is over: it closes the listener, lets the requests
//             in flight finish and exits 143.
//   exit      the handler Next.js's self-hosting docs show for
//             NEXT_MANUAL_SIG_HANDLE (Next.js then installs none): readiness
//             503 for PRE_DRAIN_MS, then process.exit(0) — the requests
//             still in flight are cut.
import { drainState } from './drain';

export function installDrain(mode, pre) {
  const s = drainState();
  const nexts = process.listeners('SIGTERM');
  if (mode === 'predrain') {
    if (nexts.length === 0) throw new Error('DRAIN=predrain: next start installed no SIGTERM handler (NEXT_MANUAL_SIG_HANDLE set?)');
    process.removeAllListeners('SIGTERM');
  }
  process.once('SIGTERM', () => {
    s.draining = true;
    setTimeout(() => {
      if (mode === 'predrain') {
        for (const f of nexts) f('SIGTERM');
      } else {
        process.exit(0);
      }
    }, pre);
  });
}
