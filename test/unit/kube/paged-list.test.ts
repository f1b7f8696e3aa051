// A list is read in pages of 500 (limit and continue), as client-go's reflector reads it: over
// the wire to a local server that pages as the API server does, through the pod list-watch.
// Each page, and each watched pod, is prepared (trimmed, for the fleet also shared) before
// anything keeps it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { createApiClients } from '../../../src/kube/api-clients.js';
import { listInPages } from '../../../src/kube/paged-list.js';
import { unlimited } from '../../../src/kube/rate-limiter.js';
import type { WatchEventType } from '../../../src/kube/list-watch.js';
import type { Pod } from '../../../src/pod/types.js';
import { kubePodsListWatch } from '../../../src/sources/pod-list-watch.js';
import { kubePodsOnNodes } from '../../../src/fleet/pod-fan-out.js';

/** Serves `total` pods in pages as the API server does, and a watch of `watchEvents`; records each request's query. */
async function pagingServer(total: number, failAtPage?: number, watchEvents: object[] = []) {
  const queries: URLSearchParams[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    if (query.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(watchEvents.map((e) => `${JSON.stringify(e)}\n`).join(''));
      return;
    }
    queries.push(query);
    const limit = Number(query.get('limit') ?? total);
    const from = Number(query.get('continue') ?? '0');
    if (failAtPage !== undefined && queries.length === failAtPage) {
      res.writeHead(410, { 'content-type': 'application/json' }).end('{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired"}');
      return;
    }
    const items = Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, i) => ({ metadata: { name: `p${from + i}`, namespace: 'ns', uid: `u${from + i}`, managedFields: [{ manager: 'm' }] } }));
    const next = from + items.length < total ? String(from + items.length) : undefined;
    // Every page of one list holds the first page's resourceVersion, as the server's do.
    const metadata = { resourceVersion: '42', ...(next !== undefined ? { continue: next, remainingItemCount: total - from - items.length } : {}) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata, items }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as { port: number }).port}` }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return { kc, queries, close: () => server.close() };
}

it('the pod list-watch lists 1,234 pods in three pages of at most 500 and keeps the snapshot\'s resourceVersion', async () => {
  const s = await pagingServer(1234);
  try {
    const core = createApiClients(s.kc, unlimited).core;
    const list = await kubePodsListWatch(s.kc, 'spec.nodeName!=', 60, core, { prepare: (pod) => pod }).list();
    assert.equal(list.items.length, 1234);
    assert.deepEqual(list.items.slice(498, 502).map((p) => p.metadata?.name), ['p498', 'p499', 'p500', 'p501'], 'in order, none twice');
    assert.equal(list.metadata?.resourceVersion, '42');
    assert.equal((list.metadata as Record<string, unknown>)['continue'], undefined, 'the whole list has no next page');
    assert.deepEqual(s.queries.map((q) => [q.get('limit'), q.get('continue'), q.get('fieldSelector')]), [
      ['500', null, 'spec.nodeName!='],
      ['500', '500', 'spec.nodeName!='],
      ['500', '1000', 'spec.nodeName!='],
    ]);
  } finally {
    s.close();
  }
});

it('a list that fits in one page is one request, returned as it came', async () => {
  const s = await pagingServer(3);
  try {
    const core = createApiClients(s.kc, unlimited).core;
    const list = await listInPages((page) => core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1', ...page }));
    assert.deepEqual(list.items.map((p) => p.metadata?.name), ['p0', 'p1', 'p2']);
    assert.equal(s.queries.length, 1);
  } finally {
    s.close();
  }
});

it('a page refused (the continue token expired: 410) fails the whole list', async () => {
  const s = await pagingServer(1200, 2);
  try {
    const core = createApiClients(s.kc, unlimited).core;
    await assert.rejects(listInPages((page) => core.listPodForAllNamespaces(page)), (err: unknown) => (err as { code?: number }).code === 410);
    assert.equal(s.queries.length, 2, 'no page after the refused one');
  } finally {
    s.close();
  }
});

it('reads the next page\'s token as client-node\'s models name it too (_continue)', async () => {
  const pages = [
    { metadata: { resourceVersion: '7', _continue: 'b' }, items: [1, 2] },
    { metadata: { resourceVersion: '7' }, items: [3] },
  ];
  const asked: Array<string | undefined> = [];
  const list = await listInPages<number>(async (page) => (asked.push(page._continue), pages[asked.length - 1]!), 2);
  assert.deepEqual(list.items, [1, 2, 3]);
  assert.deepEqual(asked, [undefined, 'b']);
  assert.deepEqual(list.metadata, { resourceVersion: '7' });
});

it('each page is prepared as it arrives, before the next one is asked for', async () => {
  const pages = [
    { metadata: { resourceVersion: '7', continue: 'b' }, items: [1, 2] },
    { metadata: { resourceVersion: '7' }, items: [3] },
  ];
  let asked = 0;
  const preparedAt: Array<[number, number]> = [];
  const list = await listInPages<number>(async () => pages[asked++]!, 2, (n) => (preparedAt.push([n, asked]), n * 10));
  assert.deepEqual(list.items, [10, 20, 30]);
  assert.deepEqual(preparedAt, [[1, 1], [2, 1], [3, 2]], 'the first page prepared while only it was asked for');
});

it('the fleet keeps every pod listed or watched without managedFields and with its common parts shared; bookmarks and errors pass as they came', async () => {
  const pod = (name: string, node: string): Pod => ({
    metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: '50', managedFields: [{ manager: 'm' }] },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'pause' }] },
  });
  const bookmark = { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '51' } } };
  const status = { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' } };
  const s = await pagingServer(3, undefined, [{ type: 'ADDED', object: pod('w1', 'n1') }, { type: 'MODIFIED', object: pod('w2', 'n1') }, { type: 'DELETED', object: pod('w3', 'n2') }, bookmark, status]);
  try {
    const lw = kubePodsOnNodes(s.kc, createApiClients(s.kc, unlimited).core, 60);
    const list = await lw.list();
    assert.deepEqual(list.items.map((p) => p.metadata?.managedFields), [undefined, undefined, undefined]);
    const seen: Array<[WatchEventType, unknown]> = [];
    await new Promise<void>((resolve) => void lw.watch('42', (type, object) => seen.push([type, object]), () => resolve()));
    assert.deepEqual(seen.map(([type]) => type), ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);
    const [w1, w2, w3] = seen.slice(0, 3).map(([, o]) => o as Pod) as [Pod, Pod, Pod];
    assert.deepEqual([w1, w2, w3].map((p) => p.metadata?.managedFields), [undefined, undefined, undefined]);
    // The first of a kind is seen once, the second enters the shared table, the third shares.
    assert.notEqual(w1.spec!.containers, w2.spec!.containers);
    assert.equal(w2.spec!.containers, w3.spec!.containers, 'the third of a kind holds the second one\'s parts');
    assert.deepEqual(seen[3]![1], bookmark.object);
    assert.deepEqual(seen[4]![1], status.object);
  } finally {
    s.close();
  }
});

it('the node\'s own pod list-watch trims the mirror pods only', async () => {
  const s = await pagingServer(0, undefined, [
    { type: 'ADDED', object: { metadata: { name: 'm', namespace: 'ns', uid: 'um', annotations: { 'kubernetes.io/config.mirror': 'h' }, managedFields: [{ manager: 'kubelet' }] } } },
    { type: 'ADDED', object: { metadata: { name: 'o', namespace: 'ns', uid: 'uo', managedFields: [{ manager: 'kubectl' }] } } },
  ]);
  try {
    const lw = kubePodsListWatch(s.kc, 'spec.nodeName=n1', 60, createApiClients(s.kc, unlimited).core);
    const seen: Pod[] = [];
    await new Promise<void>((resolve) => void lw.watch('1', (_type, object) => seen.push(object as Pod), () => resolve()));
    assert.deepEqual(seen.map((p) => [p.metadata?.name, p.metadata?.managedFields?.length]), [['m', undefined], ['o', 1]]);
  } finally {
    s.close();
  }
});
