import { drainState } from '../../lib/drain';

export const dynamic = 'force-dynamic';

// Readiness: 503 once the app's own SIGTERM handler (NEXT_MANUAL_SIG_HANDLE)
// has started draining.
export function GET() {
  if (drainState().draining) return new Response('draining\n', { status: 503 });
  return new Response('ready\n');
}
