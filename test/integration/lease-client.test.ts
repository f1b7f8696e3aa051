// The fleet's lean Lease client (src/kube/lease-client.ts) on a real kube-apiserver, as the
// node itself (NodeRestriction: a node writes only its own Lease): what the node lease does
// through it (create, renew, a conflict, a 404) and how a refused credential fails, beside
// client-node's CoordinationV1Api reading the same objects.
import assert from 'node:assert/strict';
import type { Agent } from 'node:https';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { CoordinationV1Api, V1MicroTime, type KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { createConnectionPool, type LeaseApi } from '../../src/kube/api-clients.js';
import { apiErrorInfo, isConflict, isNotFound } from '../../src/kube/api-error.js';
import { createLeaseClient } from '../../src/kube/lease-client.js';
import { createTokenBucket, unlimited } from '../../src/kube/rate-limiter.js';
import { createNodeLease, NODE_LEASE_NAMESPACE } from '../../src/node/node-lease.js';
import { kubeConfigFromFile, registerNode, useControlPlane } from '../helpers/control-plane.js';

const NODE = 'lean-lease';
const cp = useControlPlane({ nodes: [NODE] });

const leanFor = (kc: KubeConfig): LeaseApi => {
  const lean = createLeaseClient(kc, createTokenBucket({ qps: 50, burst: 100 }), { pool: createConnectionPool() });
  assert.ok(lean, 'a token kubeconfig over https gets the lean client');
  return lean;
};

it('the node lease over the lean client: created owned by the Node, renewed in place, a conflict read again and renewed', async () => {
  const kc = cp.kubeConfig(NODE);
  const node = await registerNode(cp.nodeApi(NODE), NODE);
  const lean = leanFor(kc);
  const typed = kc.makeApiClient(CoordinationV1Api);

  await assert.rejects(lean.readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE }), (err) => isNotFound(err));

  const lease = createNodeLease({ nodeName: NODE, api: lean, getNode: async () => node });
  assert.equal(await lease.syncNow(), true);
  const created = await typed.readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE });
  assert.equal(created.spec?.holderIdentity, NODE);
  assert.equal(created.spec?.leaseDurationSeconds, 40);
  assert.deepEqual(created.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid]), [['Node', NODE, node.metadata?.uid]]);

  assert.equal(await lease.syncNow(), true);
  const renewed = await typed.readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE });
  assert.notEqual(renewed.metadata?.resourceVersion, created.metadata?.resourceVersion);
  assert.ok(new Date(String(renewed.spec?.renewTime)).getTime() >= new Date(String(created.spec?.renewTime)).getTime());
  assert.equal(renewed.metadata?.uid, created.metadata?.uid, 'renewed in place, not recreated');

  // Someone else writes the Lease: our cached copy is stale, and the renewal conflicts, reads it fresh and renews in one attempt.
  const theirs = await typed.replaceNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE, body: { ...renewed, spec: { ...renewed.spec, renewTime: new V1MicroTime(Date.now()) } } });
  assert.equal(await lease.syncNow(), true);
  const after = await typed.readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE });
  assert.equal(after.spec?.holderIdentity, NODE);
  assert.notEqual(after.metadata?.resourceVersion, theirs.metadata?.resourceVersion, 'renewed over the other write');

  // The same conflict seen directly: 409 with reason Conflict, as client-node reports it.
  const stale = { ...renewed, spec: { ...renewed.spec, renewTime: new V1MicroTime(Date.now()) } };
  const viaLean = await lean.replaceNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE, body: stale }).then(() => undefined, (err: unknown) => err);
  const viaTyped = await typed.replaceNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE, body: stale }).then(() => undefined, (err: unknown) => err);
  assert.ok(isConflict(viaLean));
  assert.deepEqual(apiErrorInfo(viaLean), apiErrorInfo(viaTyped));
  await lease.stop();
});

it('a refused token: 401 as client-node reports it, and neither the error nor the log carries the token', async () => {
  const kc = kubeConfigFromFile(cp.cluster.nodeKubeconfigs[NODE]!);
  const badToken = 'not-a-valid-token-0123456789abcdef';
  kc.users = kc.users.map((u) => ({ ...u, token: badToken }));
  const lean = createLeaseClient(kc, unlimited)!;
  const viaLean = await lean.readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE }).then(() => undefined, (err: unknown) => err);
  const viaTyped = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE }).then(() => undefined, (err: unknown) => err);
  assert.deepEqual(apiErrorInfo(viaLean), { code: 401, reason: '' });
  assert.deepEqual(apiErrorInfo(viaLean), apiErrorInfo(viaTyped));
  assert.ok(!String((viaLean as Error).message).includes(badToken));

  const lines: string[] = [];
  const logger = pino({ base: undefined }, new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
  const lease = createNodeLease({ nodeName: NODE, api: lean, logger });
  assert.equal(await lease.syncNow(), false);
  assert.match(lines.join(''), /failed to renew the lease of node \\"lean-lease\\": HTTP 401/);
  assert.ok(!lines.join('').includes(badToken), 'the token is not logged');
});

it('over a pool of few connections (the fleet\'s own Lease pool): calls beyond it wait for a connection and are all answered', async () => {
  const kc = cp.kubeConfig(NODE);
  const inner = createConnectionPool(2);
  const agents = new Set<Agent>();
  const pool = { agentFor: (o: Parameters<typeof inner.agentFor>[0]) => { const a = inner.agentFor(o); agents.add(a); return a; }, setMaxSockets: (n: number) => inner.setMaxSockets(n), queued: () => inner.queued() };
  const lean = createLeaseClient(kc, unlimited, { pool });
  assert.ok(lean);
  const lease = createNodeLease({ nodeName: NODE, api: lean });
  assert.equal(await lease.syncNow(), true);
  const many = await Promise.all(Array.from({ length: 20 }, () => lean.readNamespacedLease({ name: NODE, namespace: NODE_LEASE_NAMESPACE })));
  assert.ok(many.every((l) => l.spec?.holderIdentity === NODE), 'all twenty answered');
  assert.equal(agents.size, 1, 'one agent for the one identity');
  // Keep-alive connections stay with the agent, busy or free: every one it opened is counted.
  const [agent] = agents;
  const opened = [agent!.sockets, agent!.freeSockets].flatMap((byHost) => Object.values(byHost).flatMap((list) => list ?? [])).length;
  assert.ok(opened <= 2 && opened > 0, `at most the pool's two connections opened (saw ${opened})`);
  await lease.stop();
});
