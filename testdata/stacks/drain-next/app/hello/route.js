export const dynamic = 'force-dynamic';

export function GET() {
  return new Response('hello from next\n');
}
