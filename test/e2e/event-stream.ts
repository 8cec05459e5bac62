/** Server-Sent Events read over a real connection, for the tests of the logs routes. */
import assert from 'node:assert/strict';

export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** An open event stream: `next(match)` reads events until one matches. */
export async function openStream(url: string, token: string) {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' }, signal: abort.signal });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const events: SseEvent[] = [];
  return {
    events,
    async next(match: (event: SseEvent) => boolean): Promise<SseEvent> {
      for (;;) {
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields = block.split('\n').filter((l) => !l.startsWith(':'));
          if (fields.length === 0) continue;
          const event = {
            event: fields.find((f) => f.startsWith('event: '))?.slice(7) ?? 'message',
            data: fields.find((f) => f.startsWith('data: '))?.slice(6) ?? '',
          };
          events.push(event);
          if (match(event)) return event;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended; events: ${JSON.stringify(events)}`);
        buffer += value;
      }
    },
    close: () => abort.abort(),
  };
}
