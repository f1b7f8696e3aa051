// The agent's API clients reuse connections: client-node 1.x alone opens a new TLS connection
// for every request; createApiClients keeps a pool, and every request waits for the limiter.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { CoreV1Api } from '@kubernetes/client-node';
import { createApiClients } from '../../src/kube/api-clients.js';
import { apiErrorInfo, apiStatusOf, isAlreadyExists, isConflict, isNotFound, isUIDMismatch } from '../../src/kube/api-error.js';
import { loadKubeConfigFile } from '../../src/kube/kubeconfig-file.js';
import { PatchStrategy, setHeaderOptions } from '../../src/kube/request-options.js';
import { createTokenBucket, unlimited } from '../../src/kube/rate-limiter.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';

const cp = useControlPlane({ nodes: ['pool-node'], registerNodes: true });

// https.Agent opens every connection through tls.connect, looked up on the module at call
// time, so wrapping it counts the TLS connections made while `fn` runs.
function countSockets<T>(fn: () => Promise<T>): Promise<{ result: T; sockets: number }> {
  let sockets = 0;
  const original = tls.connect;
  tls.connect = ((...args: Parameters<typeof tls.connect>) => {
    sockets++;
    return original(...args);
  }) as typeof tls.connect;
  return fn()
    .then((result) => ({ result, sockets }))
    .finally(() => {
      tls.connect = original;
    });
}

it('40 sequential requests as the node share one or two connections (client-node alone: one each)', async () => {
  const kubeConfig = kubeConfigFromFile(cp.cluster.nodeKubeconfigs['pool-node']!);
  const { core } = createApiClients(kubeConfig, unlimited);
  const pooled = await countSockets(async () => {
    for (let i = 0; i < 40; i++) await core.readNode({ name: 'pool-node' });
  });
  assert.ok(pooled.sockets >= 1 && pooled.sockets <= 2, `expected 1 or 2 connections, saw ${pooled.sockets}`);

  // The baseline this fixes, measured the same way.
  const plain = kubeConfig.makeApiClient((await import('@kubernetes/client-node')).CoreV1Api);
  const unpooled = await countSockets(async () => {
    for (let i = 0; i < 10; i++) await plain.readNode({ name: 'pool-node' });
  });
  assert.ok(unpooled.sockets >= 10, `client-node without the pool opened ${unpooled.sockets} connections for 10 requests`);
});

it('requests wait for the rate limiter: 30 calls at 20 QPS with burst 10 take at least one second', async () => {
  const { core } = createApiClients(kubeConfigFromFile(cp.cluster.nodeKubeconfigs['pool-node']!), createTokenBucket({ qps: 20, burst: 10 }));
  const started = performance.now();
  // The node's pods, as its pod source lists them: reading its own Node would be a heartbeat,
  // which takes no token (as the kubelet's).
  await Promise.all(Array.from({ length: 30 }, () => core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=pool-node', limit: 1 })));
  // 10 at once, then 20 more at 20/s: no fewer than 950 ms can pass.
  assert.ok(performance.now() - started >= 950, 'the bucket was bypassed');
});

it('static credentials are read by our client, never applied through client-node per request; an exec plugin user is asked every time', async () => {
  const kubeConfig = kubeConfigFromFile(cp.cluster.nodeKubeconfigs['pool-node']!);
  let applied = 0;
  const original = kubeConfig.applySecurityAuthentication.bind(kubeConfig);
  kubeConfig.applySecurityAuthentication = async (context) => {
    applied++;
    return original(context);
  };
  const { core } = createApiClients(kubeConfig, unlimited);
  const nodes = await Promise.all(Array.from({ length: 20 }, () => core.readNode({ name: 'pool-node' })));
  assert.equal(nodes.length, 20);
  assert.equal(applied, 0, 'the token and CA were read from the kubeconfig by our client (src/kube/cluster-access.ts), not applied by client-node, for 20 authenticated requests');

  // A user whose token comes from an exec plugin may change it: client-node applies it per request.
  const execConfig = kubeConfigFromFile(cp.cluster.nodeKubeconfigs['pool-node']!);
  const user = execConfig.getCurrentUser()!;
  const token = (user as { token?: string }).token!;
  execConfig.users = execConfig.users.map((u) =>
    u.name === user.name
      ? { name: u.name, exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: ${JSON.stringify(token)} } }))`], interactiveMode: 'Never' } }
      : u,
  );
  let execApplied = 0;
  const execOriginal = execConfig.applySecurityAuthentication.bind(execConfig);
  execConfig.applySecurityAuthentication = async (context) => {
    execApplied++;
    return execOriginal(context);
  };
  const exec = createApiClients(execConfig, unlimited);
  for (let i = 0; i < 3; i++) await exec.core.readNode({ name: 'pool-node' });
  assert.equal(execApplied, 3);
});

it('events go through their own bucket (eventRecordQPS) on the same connection pool', async () => {
  const kubeConfig = kubeConfigFromFile(cp.cluster.nodeKubeconfigs['pool-node']!);
  // The main bucket has one token, refilled once a minute: a second main request would wait.
  const main = createTokenBucket({ qps: 1 / 60, burst: 1 });
  const { core, events } = createApiClients(kubeConfig, main, { eventLimiter: createTokenBucket({ qps: 50, burst: 10 }) });
  const event = (i: number) => ({
    metadata: { name: `pool-node.${i}-${Date.now()}`, namespace: 'default' },
    involvedObject: { kind: 'Node', name: 'pool-node', uid: 'pool-node' },
    reason: 'Probe',
    message: 'm',
    type: 'Normal',
    source: { component: 'kubelet', host: 'pool-node' },
  });
  const { sockets } = await countSockets(async () => {
    await core.readNode({ name: 'pool-node' }); // the main bucket's only token
    const started = performance.now();
    for (let i = 0; i < 5; i++) await events.createNamespacedEvent({ namespace: 'default', body: event(i) });
    assert.ok(performance.now() - started < 10_000, 'event writes did not wait for the main bucket');
  });
  assert.ok(sockets >= 1 && sockets <= 2, `one pool for both: ${sockets} connections`);
  const { events: unlimitedEvents, core: sameCore } = createApiClients(kubeConfig, unlimited);
  assert.equal(unlimitedEvents, sameCore, 'without an event limiter, events share the main client');
});

it('a refused call reads as it did through client-node: NotFound, AlreadyExists, a failed UID precondition, a UID mismatch', async () => {
  const admin = cp.cluster.adminKubeconfig;
  const ours = createApiClients(loadKubeConfigFile(admin).kubeConfig, unlimited).core;
  const theirs = kubeConfigFromFile(admin).makeApiClient(CoreV1Api);
  const namespace = cp.namespace;
  const pod = (name: string) => ({ metadata: { name, namespace }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
  const failed = (call: Promise<unknown>): Promise<unknown> => call.then(() => assert.fail('the call succeeded'), (err: unknown) => err);
  await ours.createNamespacedPod({ namespace, body: pod('taken') });
  const cases: [string, (api: Pick<CoreV1Api, 'readNamespacedPod' | 'createNamespacedPod' | 'deleteNamespacedPod' | 'patchNamespacedPodStatus'>) => Promise<unknown>, (e: unknown) => boolean][] = [
    ['read a pod that does not exist', (api) => api.readNamespacedPod({ name: 'absent', namespace }), isNotFound],
    ['create a pod whose name is taken', (api) => api.createNamespacedPod({ namespace, body: pod('taken') }), isAlreadyExists],
    ['delete with another UID as precondition', (api) => api.deleteNamespacedPod({ name: 'taken', namespace, body: { preconditions: { uid: 'not-its-uid' } } }), isConflict],
    // Our setHeaderOptions works with client-node's clients too (a library user may pass one).
    ['patch the status with another UID', (api) => api.patchNamespacedPodStatus({ name: 'taken', namespace, body: { metadata: { uid: 'not-its-uid' }, status: {} } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch) as never), isUIDMismatch],
  ];
  for (const [what, call, predicate] of cases) {
    const mine = await failed(call(ours));
    const before = await failed(call(theirs as never));
    assert.deepEqual(apiErrorInfo(mine), apiErrorInfo(before), what);
    assert.deepEqual(apiStatusOf(mine), apiStatusOf(before), what);
    assert.ok(predicate(mine) && predicate(before), what);
    assert.equal((mine as { body?: unknown }).body, (before as { body?: unknown }).body, `${what}: the same Status text`);
  }
  assert.ok(!isConflict(await failed(ours.createNamespacedPod({ namespace, body: pod('taken') }))), 'AlreadyExists is not a Conflict');
});
