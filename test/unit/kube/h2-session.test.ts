import assert from 'node:assert/strict';
import http2, { type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createH2Session, type H2Request } from '../../../src/kube/h2-session.js';
import { waitFor } from '../../helpers/wait.js';

// A cleartext HTTP/2 server that takes two streams at a time and answers only when told.
describe('HTTP/2 session', () => {
  let server: http2.Http2Server;
  let origin: string;
  const held: ServerHttp2Stream[] = [];
  const paths: string[] = [];
  let open = 0;
  let mostOpen = 0;

  before(async () => {
    server = http2.createServer({ settings: { maxConcurrentStreams: 2 } });
    server.on('stream', (stream, headers) => {
      paths.push(String(headers[':path']));
      open++;
      mostOpen = Math.max(mostOpen, open);
      stream.on('close', () => open--);
      stream.on('error', () => undefined);
      held.push(stream);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  // Sessions a failed test left open must not keep the server (and the test run) alive.
  after(() => {
    for (const stream of held) stream.close();
    server.close();
  });

  const answerAll = (): void => {
    for (const stream of held.splice(0)) {
      if (stream.closed) continue;
      stream.respond({ ':status': 200 });
      stream.end('ok');
    }
  };
  const until = (what: () => boolean): Promise<boolean> => waitFor(what, String(what), { timeoutMs: 2000 });

  it("opens no more streams than the server takes; a request ended while it waits never reaches the server", async () => {
    const session = createH2Session(origin, {});
    // One answered request first, so the server's SETTINGS (its stream limit) have arrived.
    const first = session.request('GET', '/0', {}, undefined);
    await until(() => held.length === 1);
    answerAll();
    assert.equal((await first).status, 200);
    paths.length = 0;
    const handles: H2Request[] = [];
    const answers = ['/1', '/2', '/3', '/4', '/5'].map((path) =>
      session.request('GET', path, {}, undefined, (h) => handles.push(h)).then(
        (a) => `${a.status} ${a.text}`,
        (err: Error) => err.message,
      ),
    );
    await until(() => held.length === 2);
    assert.deepEqual(session.pending(), { streams: 2, waiting: 3 });
    handles[3]!.destroy(new Error('deadline of /4'));
    assert.deepEqual(session.pending(), { streams: 2, waiting: 2 });
    while (paths.length < 4) {
      answerAll();
      await new Promise((r) => setTimeout(r, 20));
    }
    answerAll();
    assert.deepEqual(await Promise.all(answers), ['200 ok', '200 ok', '200 ok', 'deadline of /4', '200 ok']);
    assert.deepEqual(paths, ['/1', '/2', '/3', '/5']);
    assert.equal(mostOpen, 2);
    // A stream closes just after its answer ends.
    await until(() => session.pending().streams === 0);
    assert.equal(session.pending().waiting, 0);
    session.close();
  });

  it('ends a request already sent by destroying its stream', async () => {
    const session = createH2Session(origin, {});
    let handle: H2Request | undefined;
    const answer = session.request('GET', '/held', {}, undefined, (h) => (handle = h)).then(
      () => 'answered',
      (err: Error) => err.message,
    );
    await until(() => paths.includes('/held'));
    handle!.destroy(new Error('deadline of /held'));
    assert.equal(await answer, 'deadline of /held');
    await until(() => session.pending().streams === 0);
    session.close();
  });
});
