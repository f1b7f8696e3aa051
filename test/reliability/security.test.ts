// Security: with node credentials under NodeRestriction (Node,RBAC authorization) the agent does
// all its work — Node, Lease, mirror pods and their status — while the same credentials are
// refused for another node's objects; endpoints bind to loopback unless configured; and no
// token or --manifest-url-header value appears in any log line (the HTTP source is made to fail
// so that its error paths log too).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CoordinationV1Api, type V1Pod } from '@kubernetes/client-node';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { useControlPlane, registerNode } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { LogCapture, stopsAfterAll, convergeExactly, manifest, startAgent, tokensOf, type Expected } from './helpers.js';

const NODE = 'rel-sec-a';
const OTHER = 'rel-sec-b';
const cp = useControlPlane({ nodes: [NODE, OTHER] });
const logs = new LogCapture('security');
const stops = stopsAfterAll();
const SECRET = randomBytes(24).toString('hex');

const statusOf = async (p: Promise<unknown>): Promise<number> => p.then(() => 200, (err: { code?: number }) => err.code ?? -1);

it('node credentials: the agent does all its work; the other node\'s objects are refused; loopback; no secret in the logs', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-sec-'));
  const names = Array.from({ length: 10 }, (_, i) => `s-${i}`);
  for (const n of names) await writeFile(join(dir, `${n}.yaml`), manifest(n, cp.namespace, 'nginx:1.27'));
  // A manifest URL that always fails with the secret header: its error paths log.
  let requests = 0;
  let withSecret = 0;
  const server = createServer((req, res) => {
    requests++;
    if (req.headers['authorization'] === `Bearer ${SECRET}`) withSecret++;
    res.writeHead(500, { 'www-authenticate': `Bearer ${SECRET}` }).end(`internal error, token was Bearer ${SECRET}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  stops.push(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
  const configFile = join(dir, 'kubelet.json');
  await writeFile(configFile, JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', httpCheckFrequency: '200ms' }));

  const agent = await startAgent({
    kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!,
    node: NODE,
    flags: ['--config', configFile, '--pod-manifest-path', dir, '--manifest-url', url, '--manifest-url-header', `Authorization:Bearer ${SECRET}`],
    logger: logs.logger('agent'),
  });
  stops.push(() => agent.stop());

  // All its work, with node credentials: Node, Lease, mirrors, their Running status.
  const expected: Expected[] = names.map((n) => ({ name: `${n}-${NODE}`, namespace: cp.namespace, image: 'nginx:1.27' }));
  await convergeExactly(cp.adminApi, NODE, expected, 60_000);
  await waitFor(async () => {
    const pods = (await cp.adminApi.listNamespacedPod({ namespace: cp.namespace })).items;
    return pods.filter((p) => p.status?.phase === 'Running').length === names.length;
  }, 'every mirror Running', { timeoutMs: 60_000, intervalMs: 200 });
  const node = await cp.adminApi.readNode({ name: NODE });
  assert.equal(node.metadata?.name, NODE);
  const adminCoord = cp.kubeConfig(NODE).makeApiClient(CoordinationV1Api);
  await waitFor(() => adminCoord.readNamespacedLease({ namespace: 'kube-node-lease', name: NODE }).then(() => true, () => false), 'the node lease', { timeoutMs: 30_000 });
  await waitFor(() => requests >= 3, 'the failing manifest URL polled a few times', { timeoutMs: 10_000 });
  assert.ok(withSecret >= 3, 'the header was sent');

  // The same credentials against the other node's objects: refused.
  const mine = cp.nodeApi(NODE);
  const otherNode = await registerNode(cp.nodeApi(OTHER), OTHER);
  const mirrorFor = (nodeName: string, uid: string): V1Pod => ({
    metadata: {
      name: `intruder-${nodeName}`,
      namespace: cp.namespace,
      annotations: { 'kubernetes.io/config.mirror': 'x', 'kubernetes.io/config.hash': 'x', 'kubernetes.io/config.source': 'file' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid, controller: true }],
    },
    spec: { nodeName, containers: [{ name: 'c', image: 'nginx:1.27' }] },
  });
  const refused: Record<string, number> = {
    'create a mirror pod on the other node': await statusOf(mine.createNamespacedPod({ namespace: cp.namespace, body: mirrorFor(OTHER, otherNode.metadata!.uid!) })),
    'create a non-mirror pod on its own node': await statusOf(
      mine.createNamespacedPod({ namespace: cp.namespace, body: { metadata: { name: 'plain' }, spec: { nodeName: NODE, containers: [{ name: 'c', image: 'i' }] } } }),
    ),
    'update the other Node': await statusOf(mine.replaceNode({ name: OTHER, body: { ...otherNode, metadata: { ...otherNode.metadata, labels: { hacked: 'yes' } } } })),
    'delete the other Node': await statusOf(mine.deleteNode({ name: OTHER })),
    'create the other node\'s Lease': await statusOf(
      cp.kubeConfig(NODE).makeApiClient(CoordinationV1Api).createNamespacedLease({
        namespace: 'kube-node-lease',
        body: { metadata: { name: OTHER }, spec: { holderIdentity: OTHER, leaseDurationSeconds: 40 } },
      }),
    ),
    'read a Secret': await statusOf(mine.readNamespacedSecret({ namespace: cp.namespace, name: 'anything' })),
    'list Secrets': await statusOf(mine.listNamespacedSecret({ namespace: cp.namespace })),
  };
  // A mirror of the other node's (created by that node) cannot be deleted with ours.
  const otherApi = cp.nodeApi(OTHER);
  await otherApi.createNamespacedPod({ namespace: cp.namespace, body: mirrorFor(OTHER, otherNode.metadata!.uid!) });
  refused["delete the other node's mirror pod"] = await statusOf(mine.deleteNamespacedPod({ namespace: cp.namespace, name: `intruder-${OTHER}` }));
  for (const [what, code] of Object.entries(refused)) assert.equal(code, 403, `${what}: refused with 403`);

  // Endpoints: loopback by default, for the read-only port and healthz alike.
  const addrs = agent.addresses();
  assert.equal(addrs.readOnly?.address, '127.0.0.1');
  assert.equal(addrs.healthz?.address, '127.0.0.1');
  const defaults = (await resolveRunConfig(['--hostname-override', 'x'])).config;
  assert.equal(defaults.address, '127.0.0.1');
  assert.equal(defaults.healthzBindAddress, '127.0.0.1');
  // ...and elsewhere only when configured.
  assert.equal((await resolveRunConfig(['--hostname-override', 'x', '--address', '0.0.0.0'])).config.address, '0.0.0.0');

  await agent.stop();
  const lines = await logs.assertNoSecrets([SECRET, `Bearer ${SECRET}`, ...tokensOf(Object.values(cp.cluster.nodeKubeconfigs)), ...tokensOf([cp.cluster.adminKubeconfig])]);
  const httpErrors = logs.records().filter((r) => r.source === 'http' || (typeof r.url === 'string' && r.url === url)).length;
  assert.ok(httpErrors >= 1, 'the failing manifest URL was logged (so the scan saw its error paths)');
  t.diagnostic(
    `agent with system:node:${NODE}: ${names.length} mirrors Running, Node and Lease kept; refused (403): ${Object.keys(refused).length} of ${Object.keys(refused).length} ` +
      `(${Object.keys(refused).join('; ')}); endpoints on 127.0.0.1; log scan: ${lines} lines (${httpErrors} from the failing manifest URL), no token, no header value`,
  );
});
