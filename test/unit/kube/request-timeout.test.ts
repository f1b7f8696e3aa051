// A typed API call to a server that never answers is abandoned at its deadline, with an error
// that says so, instead of stalling the loop that awaits it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { createApiClients } from '../../../src/kube/api-clients.js';
import { apiFailureCause } from '../../../src/kube/api-error.js';
import { createApiTransport } from '../../../src/kube/api-transport.js';
import { createClusterAccess } from '../../../src/kube/cluster-access.js';
import { createTokenBucket, unlimited } from '../../../src/kube/rate-limiter.js';
import { isAbortError, timeoutFor } from '../../../src/kube/request-timeout.js';

const server = 'https://127.0.0.1:6443';

it('heartbeats (the node Lease, Node and Node status) get the short deadline, the rest the long one', () => {
  const t = { heartbeatMs: 1, otherMs: 2 };
  assert.equal(timeoutFor(`${server}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1`, t), 1);
  assert.equal(timeoutFor(`${server}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases`, t), 1);
  assert.equal(timeoutFor(`${server}/api/v1/nodes/n1`, t), 1);
  assert.equal(timeoutFor(`${server}/api/v1/nodes/n1/status?fieldManager=x`, t), 1);
  assert.equal(timeoutFor(`${server}/api/v1/nodes`, t), 1);
  assert.equal(timeoutFor(`${server}/api/v1/namespaces/kube-system/pods`, t), 2);
  assert.equal(timeoutFor(`${server}/api/v1/namespaces/kube-system/pods/etcd-n1/status`, t), 2);
  assert.equal(timeoutFor(`${server}/apis/coordination.k8s.io/v1/namespaces/other/leases/n1`, t), 2);
});

/** A plain-HTTP test server and our transport to it, with the given deadlines. */
async function serve(handler: Parameters<typeof createHttpServer>[1], timeouts: { heartbeatMs: number; otherMs: number }) {
  const connections: Socket[] = [];
  const server = createHttpServer(handler);
  server.on('connection', (socket) => connections.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const access = createClusterAccess({ getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: true }), getCurrentUser: () => null });
  const transport = createApiTransport(access, { limiter: unlimited, timeouts });
  return { transport, connections, close: () => (connections.forEach((c) => c.destroy()), server.close()) };
}

it('the deadline is cleared once the answer is read: a finished call leaves its connection alone', async () => {
  // Deadlines long enough for a first call on a loaded machine; the pause is twice as long.
  const s = await serve((req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Node"}'), { heartbeatMs: 500, otherMs: 500 });
  try {
    assert.deepEqual(await s.transport.call({ method: 'GET', path: '/api/v1/nodes/n1' }), { kind: 'Node' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.deepEqual(await s.transport.call({ method: 'GET', path: '/api/v1/nodes/n1' }), { kind: 'Node' });
    assert.equal(s.connections.length, 1, 'the keep-alive connection of the first call served the second: no deadline destroyed it');
  } finally {
    s.close();
  }
});

it('the deadline covers reading the body: an answer that stalls half-way fails as an abort', { timeout: 10_000 }, async () => {
  const s = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"kind":');
  }, { heartbeatMs: 100, otherMs: 100 });
  try {
    const started = Date.now();
    const err = await s.transport.call({ method: 'GET', path: '/api/v1/nodes/n1' }).then(
      () => assert.fail('the stalled answer was read'),
      (e: unknown) => e,
    );
    assert.ok(isAbortError(err), `not an abort: ${String(err)}`);
    assert.ok(Date.now() - started < 5_000);
  } finally {
    s.close();
  }
});

it('a call to a server that accepts the connection and never answers fails at its deadline', { timeout: 20_000 }, async () => {
  const held: Socket[] = [];
  const silent = createServer((socket) => void held.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  try {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'not-a-real-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const apis = createApiClients(kc, createTokenBucket({ qps: 100, burst: 100 }), { timeouts: { heartbeatMs: 300, otherMs: 600 } });
    const started = Date.now();
    const lease = await apis.coordination.readNamespacedLease({ name: 'n1', namespace: 'kube-node-lease' }).then(
      () => assert.fail('the silent server answered'),
      (err: unknown) => err,
    );
    const leaseMs = Date.now() - started;
    assert.ok(isAbortError(lease), `not an abort: ${String(lease)}`);
    assert.ok(leaseMs >= 250 && leaseMs < 5_000, `heartbeat deadline took ${leaseMs} ms`);
    assert.match(String((apiFailureCause(lease) as Error).message), /within the request timeout/);

    const pods = Date.now();
    const list = await apis.core.listPodForAllNamespaces({}).then(
      () => assert.fail('the silent server answered'),
      (err: unknown) => err,
    );
    assert.ok(isAbortError(list));
    assert.ok(Date.now() - pods >= 550, 'the other calls wait for their own, longer deadline');
    assert.ok(held.length >= 1, 'the calls did reach the server');
  } finally {
    for (const s of held) s.destroy();
    silent.close();
  }
});
