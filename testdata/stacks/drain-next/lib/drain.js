// The app's drain state, shared by its routes and instrumentation.js
// through globalThis: next build bundles each route on its own, so a
// module-level variable would be one per route.
export function drainState() {
  globalThis.__healthctlDrain ??= { draining: false, inflight: 0 };
  return globalThis.__healthctlDrain;
}
