import { drainState } from '../../lib/drain';

export const dynamic = 'force-dynamic';

// The slow request drain-test keeps in flight through the signal: SLOW_MS
// (default 1500), or ?ms=N.
export async function GET(request) {
  const s = drainState();
  const ms = Number(new URL(request.url).searchParams.get('ms') || process.env.SLOW_MS || 1500);
  s.inflight++;
  try {
    await new Promise((r) => setTimeout(r, ms));
    return new Response('slow done ' + 'x'.repeat(4096) + '\n');
  } finally {
    s.inflight--;
  }
}
