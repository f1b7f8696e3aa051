// The watch as a stream of JSON lines (src/kube/watch-stream.ts): lines cut between chunks,
// several in one chunk, a last line without newline, ERROR events, a refused request, the end of
// the stream and an abort, against a local HTTP server.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { apiErrorInfo } from '../../../src/kube/api-error.js';
import { isApiException } from '../../../src/kube/api-exception.js';
import { createClusterAccess } from '../../../src/kube/cluster-access.js';
import { keepEach, kubeListWatch } from '../../../src/kube/kube-list-watch.js';
import type { KubeObject, WatchEventType } from '../../../src/kube/list-watch.js';
import { createJsonLinesParser, startWatch } from '../../../src/kube/watch-stream.js';

describe('createJsonLinesParser', () => {
  const parse = (chunks: string[]): unknown[] => {
    const out: unknown[] = [];
    const parser = createJsonLinesParser((v) => out.push(v));
    for (const c of chunks) parser.push(c);
    parser.end();
    return out;
  };

  it('joins a line cut between chunks, splits several lines of one chunk', () => {
    assert.deepEqual(parse(['{"a":', '1}\n{"b"', ':2}\n{"c":3}\n']), [{ a: 1 }, { b: 2 }, { c: 3 }]);
    assert.deepEqual(parse(['{"a":1}\n{"b":2}\n']), [{ a: 1 }, { b: 2 }]);
    assert.deepEqual(parse(['{"a"', ':', '1', '}', '\n']), [{ a: 1 }]);
  });

  it('hands over a last line without its newline at the end, skips blank lines, drops what is not JSON', () => {
    assert.deepEqual(parse(['{"a":1}\n', '{"b":2}']), [{ a: 1 }, { b: 2 }]);
    assert.deepEqual(parse(['\n\n{"a":1}\r\n  \n']), [{ a: 1 }]);
    assert.deepEqual(parse(['not json\n{"a":1}\n{"half":\n']), [{ a: 1 }]);
  });

  it('sees every line of a stream cut at every position', () => {
    const text = '{"type":"ADDED","object":{"n":"é日本"}}\n{"type":"BOOKMARK","object":{}}\n{"type":"ERROR","object":{"code":410}}';
    for (let i = 0; i <= text.length; i++) {
      assert.deepEqual(parse([text.slice(0, i), text.slice(i)]).length, 3, `cut at ${i}`);
    }
  });
});

describe('startWatch', () => {
  let server: Server;
  let url: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  const requests: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const access = () => createClusterAccess({ getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: true }), getCurrentUser: () => ({ name: 'u', token: 't' }) });

  function watch(): { events: [WatchEventType, unknown][]; ended: Promise<unknown>; handle: ReturnType<typeof startWatch> } {
    const events: [WatchEventType, unknown][] = [];
    let end: (err: unknown) => void = () => undefined;
    let calls = 0;
    const ended = new Promise<unknown>((resolve) => (end = resolve));
    const handle = startWatch(access(), {
      path: '/api/v1/pods',
      query: { fieldSelector: 'spec.nodeName=n1', resourceVersion: '7', allowWatchBookmarks: true, timeoutSeconds: 300 },
      onEvent: (type, object) => events.push([type, object]),
      done: (err) => {
        calls++;
        assert.equal(calls, 1, 'done is called once');
        end(err);
      },
    });
    return { events, ended, handle };
  }

  it('delivers the events of a stream written in odd chunks, ERROR events included, then ends with null', async () => {
    const utf8 = Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"日本"}}}\n');
    handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"8"}}}\n{"type":"BOO');
      setTimeout(() => {
        res.write('KMARK","object":{"metadata":{"resourceVersion":"9"}}}\n');
        // A character cut between two writes.
        res.write(utf8.subarray(0, 40));
        res.write(utf8.subarray(40));
        res.end('{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}');
      }, 20);
    };
    const w = watch();
    await w.handle;
    assert.equal(await w.ended, null);
    assert.deepEqual(w.events, [
      ['ADDED', { metadata: { name: 'a', resourceVersion: '8' } }],
      ['BOOKMARK', { metadata: { resourceVersion: '9' } }],
      ['MODIFIED', { metadata: { name: '日本' } }],
      ['ERROR', { kind: 'Status', code: 410, reason: 'Expired' }],
    ]);
    const query = new URL(requests[requests.length - 1]!, url).searchParams;
    assert.equal(query.get('watch'), 'true');
    assert.equal(query.get('fieldSelector'), 'spec.nodeName=n1');
    assert.equal(query.get('resourceVersion'), '7');
    assert.equal(query.get('allowWatchBookmarks'), 'true');
    assert.equal(query.get('timeoutSeconds'), '300');
  });

  it('with withoutManagedFields, objects arrive without managedFields and everything else as sent', async () => {
    const pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '8', managedFields: [{ manager: 'kubelet', fieldsV1: { 'f:status': {} } }] }, spec: { nodeName: 'n1' } };
    handler = (req, res) => void res.writeHead(200).end(`${JSON.stringify({ type: 'ADDED', object: pod })}\n{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n`);
    for (const cut of [true, false]) {
      const events: [WatchEventType, unknown][] = [];
      const ended = new Promise<unknown>((resolve) => void startWatch(access(), { path: '/api/v1/pods', query: {}, onEvent: (type, object) => events.push([type, object]), done: resolve, withoutManagedFields: cut }));
      assert.equal(await ended, null);
      const { managedFields: _dropped, ...metadata } = pod.metadata;
      assert.deepEqual(events, [
        ['ADDED', cut ? { ...pod, metadata } : pod],
        ['BOOKMARK', { metadata: { resourceVersion: '9' } }],
      ]);
    }
  });

  it('a refused request ends in an ApiException with its status, before the handle resolves', async () => {
    handler = (req, res) => void res.writeHead(410, { 'content-type': 'application/json' }).end('{"kind":"Status","code":410,"reason":"Gone","message":"too old resource version"}');
    let doneFirst = false;
    const w = watch();
    void w.ended.then(() => (doneFirst = true));
    await w.handle;
    await Promise.resolve();
    assert.ok(doneFirst, 'done was called before the handle resolved (the reflector then backs off)');
    const err = await w.ended;
    assert.ok(isApiException(err));
    assert.deepEqual(apiErrorInfo(err), { code: 410, reason: 'Gone' });
    assert.equal(w.events.length, 0);
  });

  it('abort() closes the connection; done gets an AbortError', async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
    handler = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
      req.socket.on('close', () => closed());
    };
    const w = watch();
    const h = await w.handle;
    while (w.events.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    h.abort();
    assert.equal(((await w.ended) as Error).name, 'AbortError');
    await serverSawClose;
  });

  it('a server that cannot be reached ends the watch with the transport error', async () => {
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as { port: number }).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    let err: unknown;
    await startWatch(createClusterAccess({ getCurrentCluster: () => ({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }), getCurrentUser: () => null }), {
      path: '/api/v1/pods',
      query: {},
      onEvent: () => assert.fail('no events'),
      done: (e) => (err = e),
    });
    assert.equal((err as { code?: unknown }).code, 'ECONNREFUSED');
  });

  it('kubeListWatch lists through the given call and watches with bookmarks and the timeout asked per request', async () => {
    handler = (req, res) => void res.writeHead(200).end('{"type":"DELETED","object":{"metadata":{"name":"x"}}}\n');
    let asked = 0;
    const lw = kubeListWatch({
      kubeConfig: { getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: true }), getCurrentUser: () => null },
      path: '/api/v1/nodes',
      list: async () => ({ metadata: { resourceVersion: '5' }, items: [] }),
      timeoutSeconds: () => 300 + asked++,
    });
    assert.deepEqual(await lw.list(), { metadata: { resourceVersion: '5' }, items: [] });
    for (const expected of ['300', '301']) {
      const events: string[] = [];
      const ended = new Promise<unknown>((resolve) => void lw.watch('5', (type) => events.push(type), resolve));
      assert.equal(await ended, null);
      assert.deepEqual(events, ['DELETED']);
      const query = new URL(requests[requests.length - 1]!, url).searchParams;
      assert.equal(new URL(requests[requests.length - 1]!, url).pathname, '/api/v1/nodes');
      assert.equal(query.get('timeoutSeconds'), expected);
      assert.equal(query.get('allowWatchBookmarks'), 'true');
      assert.equal(query.get('resourceVersion'), '5');
    }
  });

  it('kubeListWatch withoutManagedFields: listed and watched objects reach prepare trimmed, whether or not the cut fits the text', async () => {
    const managedFields = [{ manager: 'kubelet', operation: 'Update' }];
    // A Node with a spec after its metadata (the cut applies) and one without (trimmed after parsing).
    const withSpec = { kind: 'Node', metadata: { name: 'a', managedFields }, spec: {} };
    const withoutSpec = { kind: 'Node', metadata: { name: 'b', managedFields } };
    const bookmark = { metadata: { resourceVersion: '9' } };
    const status = { kind: 'Status', code: 410 };
    handler = (req, res) =>
      void res.writeHead(200).end([{ type: 'ADDED', object: withSpec }, { type: 'MODIFIED', object: withoutSpec }, { type: 'BOOKMARK', object: bookmark }, { type: 'ERROR', object: status }].map((e) => `${JSON.stringify(e)}\n`).join(''));
    const prepared: unknown[] = [];
    const lw = kubeListWatch<KubeObject>({
      kubeConfig: { getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: true }), getCurrentUser: () => null },
      path: '/api/v1/nodes',
      list: async (keep) => keepEach({ metadata: { resourceVersion: '5' }, items: [withSpec, withoutSpec] }, keep),
      timeoutSeconds: 60,
      prepare: (object) => (prepared.push(object), object),
      withoutManagedFields: true,
    });
    const trimmed = [{ kind: 'Node', metadata: { name: 'a' }, spec: {} }, { kind: 'Node', metadata: { name: 'b' } }];
    const list = await lw.list();
    assert.equal(list.metadata?.resourceVersion, '5');
    assert.deepEqual(list.items, trimmed);
    const events: [WatchEventType, unknown][] = [];
    assert.equal(await new Promise<unknown>((resolve) => void lw.watch('5', (type, object) => events.push([type, object]), resolve)), null);
    assert.deepEqual(events, [['ADDED', trimmed[0]], ['MODIFIED', trimmed[1]], ['BOOKMARK', bookmark], ['ERROR', status]], 'bookmarks and errors pass as they came');
    assert.deepEqual(prepared, [...trimmed, ...trimmed], 'prepare saw every object without managedFields, and no bookmark or error');
  });
});
