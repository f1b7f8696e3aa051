// A typed API call to a server that never answers is abandoned at its deadline, with an error
// that says so, instead of stalling the loop that awaits it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { HttpMethod, KubeConfig, RequestContext, ResponseContext, wrapHttpLibrary } from '@kubernetes/client-node';
import { createApiClients } from '../../../src/kube/api-clients.js';
import { apiFailureCause } from '../../../src/kube/api-error.js';
import { createTokenBucket } from '../../../src/kube/rate-limiter.js';
import { isAbortError, timeoutFor, withRequestDeadlines } from '../../../src/kube/request-timeout.js';

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

it('a caller that brought its own signal keeps it; otherwise the deadline is cleared once the answer is read', async () => {
  const seen: (AbortSignal | undefined)[] = [];
  const inner = wrapHttpLibrary({
    async send(request: RequestContext) {
      seen.push(request.getSignal());
      return new ResponseContext(200, {}, { text: async () => '{}', binary: async () => Buffer.from('{}') });
    },
  });
  const http = withRequestDeadlines(inner, { heartbeatMs: 50, otherMs: 50 });
  const own = new AbortController().signal;
  const mine = new RequestContext(`${server}/api/v1/nodes/n1`, HttpMethod.GET);
  mine.setSignal(own);
  await http.send(mine).toPromise();
  assert.equal(seen[0], own);

  const response = await http.send(new RequestContext(`${server}/api/v1/nodes/n1`, HttpMethod.GET)).toPromise();
  assert.ok(seen[1] instanceof AbortSignal && seen[1] !== own);
  assert.equal(await response.body.text(), '{}');
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.equal(seen[1].aborted, false, 'the deadline of a finished call no longer fires');

  // An answer whose body is never read: the deadline still ends the exchange.
  await http.send(new RequestContext(`${server}/api/v1/nodes/n1`, HttpMethod.GET)).toPromise();
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.equal(seen[2]?.aborted, true);
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
    const list = await apis.core.listNamespacedPod({ namespace: 'default' }).then(
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
