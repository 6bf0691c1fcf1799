// Runs once as `next start` starts (Next.js's instrumentation hook). DRAIN
// says how the app drains on SIGTERM (lib/drain-node.js); unset, it leaves
// SIGTERM to Next.js.
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs' && process.env.DRAIN) {
    const { installDrain } = await import('./lib/drain-node');
    installDrain(process.env.DRAIN, Number(process.env.PRE_DRAIN_MS || 0));
  }
}
