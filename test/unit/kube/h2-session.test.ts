// The HTTP/2 session's bound on open streams (src/kube/h2-session.ts): requests beyond it wait
// in order, and one whose deadline destroys it while it waits never reaches the server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2, { type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createH2Session, type Destroyable } from '../../../src/kube/h2-session.js';

describe('h2 session', () => {
  it('keeps at most maxStreams streams open; the rest wait in order, and a destroyed waiter is never sent', async () => {
    const held: { path: string; stream: ServerHttp2Stream }[] = [];
    const seen: string[] = [];
    let openAtOnce = 0;
    let most = 0;
    const server = http2.createServer();
    server.on('stream', (stream, headers) => {
      const path = String(headers[':path']);
      seen.push(path);
      most = Math.max(most, ++openAtOnce);
      stream.on('close', () => openAtOnce--);
      held.push({ path, stream });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const session = createH2Session(`http://127.0.0.1:${port}`, {}, 2);
    const answer = (): void => {
      const next = held.shift()!;
      next.stream.respond({ ':status': 200 });
      next.stream.end(next.path);
    };
    try {
      const handles = new Map<string, Destroyable>();
      const calls = ['/a', '/b', '/c', '/d'].map((path) => session.request('GET', path, {}, undefined, (h) => handles.set(path, h)));
      const dRejected = assert.rejects(calls[3]!, /deadline/);
      await until(() => held.length === 2);
      assert.deepEqual(seen, ['/a', '/b']);
      handles.get('/d')!.destroy(new Error('deadline'));
      await dRejected;
      answer();
      assert.equal((await calls[0]!).text, '/a');
      await until(() => held.length === 2);
      answer();
      answer();
      assert.deepEqual([(await calls[1]!).text, (await calls[2]!).text], ['/b', '/c']);
      assert.deepEqual(seen, ['/a', '/b', '/c'], 'the destroyed request never reached the server');
      assert.equal(most, 2);
    } finally {
      session.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
