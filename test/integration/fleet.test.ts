// `kubelet-pods fleet` on the real control plane: many nodes with their static pods from one
// process, in both identity modes (docs/fleet.md), a bad per-node manifest, a `{node}` URL
// answering 404. Fleet sizes stay small (the machine is shared); the benchmark goes further.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CoordinationV1Api, type V1Pod } from '@kubernetes/client-node';
import { createFleet, type Fleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const PER_NODE = names('fpn-', 6);
const cp = useControlPlane({ nodes: PER_NODE });

const fleets: Fleet[] = [];
const servers: Server[] = [];
after(async () => {
  await Promise.all(fleets.map((f) => f.stop()));
  for (const s of servers) s.close();
});

const MIRROR = 'kubernetes.io/config.mirror';
const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

async function mirrorsOf(prefix: string): Promise<V1Pod[]> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' });
  return list.items.filter((p) => p.spec?.nodeName?.startsWith(prefix) && p.metadata?.annotations?.[MIRROR] !== undefined);
}

async function readyNodes(prefix: string): Promise<number> {
  const list = await cp.adminApi.listNode();
  return list.items.filter((n) => n.metadata?.name?.startsWith(prefix) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

async function startFleet(raw: unknown): Promise<Fleet> {
  const fleet = await createFleet({ config: resolveFleetConfig(raw, {}), readOnlyPort: 0, shutdownTimeoutMs: 2000 });
  fleets.push(fleet);
  await fleet.start();
  return fleet;
}

describe('kubelet-pods fleet on a real control plane', () => {
  it('one credential (the shipped ClusterRole): 30 nodes × 3 static pods Ready and Running; a bad per-node manifest hurts only its node', async () => {
    const ns = cp.namespace;
    const dir = await mkdtemp(join(tmpdir(), 'fleet-'));
    const shared = join(dir, 'shared');
    const perNode = join(dir, 'nodes');
    await mkdir(shared);
    for (const name of ['a', 'b', 'c']) await writeFile(join(shared, `${name}.yaml`), manifest(`s-${name}`, ns));
    await mkdir(join(perNode, 'f1-3'), { recursive: true });
    await writeFile(join(perNode, 'f1-3', 'own.yaml'), manifest('own', ns));
    await writeFile(join(perNode, 'f1-3', 'broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n');
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const fleet = await startFleet({
      kubeconfig,
      templates: [
        { name: 'f1-{i}', count: 20, staticPodPath: shared, perNodeManifestDir: perNode, labels: { pool: 'a' } },
        { name: 'f1-b{i}', count: 10, staticPodPath: shared, taints: [{ key: 'sim', value: 'yes', effect: 'NoSchedule' }], capacity: { cpu: '8', memory: '32Gi', pods: '50' } },
      ],
    });
    await waitFor(async () => (await readyNodes('f1-')) === 30, '30 Ready nodes', { timeoutMs: 60_000, intervalMs: 250 });
    await waitFor(
      async () => {
        const mirrors = await mirrorsOf('f1-');
        return mirrors.length === 91 && mirrors.every((p) => p.status?.phase === 'Running');
      },
      '91 mirrors Running (30 nodes × 3 shared, one own)',
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    const mirror = await cp.adminApi.readNamespacedPod({ namespace: ns, name: 's-a-f1-7' });
    assert.equal(mirror.metadata?.ownerReferences?.[0]?.kind, 'Node');
    assert.equal(mirror.metadata?.ownerReferences?.[0]?.name, 'f1-7');
    const tainted = await cp.adminApi.readNode({ name: 'f1-b3' });
    // (the API server's TaintNodesByCondition adds not-ready at creation; no controller removes it here)
    assert.deepEqual({ ...tainted.spec?.taints?.find((t) => t.key === 'sim') }, { key: 'sim', value: 'yes', effect: 'NoSchedule' });
    assert.equal(tainted.status?.capacity?.['cpu'], '8');
    assert.equal(tainted.status?.allocatable?.['pods'], '50');
    assert.equal((await cp.adminApi.readNode({ name: 'f1-2' })).metadata?.labels?.['pool'], 'a');
    // The bad manifest of f1-3 is refused there; f1-3's other pods, and every other node, run.
    assert.ok((await mirrorsOf('f1-3')).some((p) => p.metadata?.name === 'own-f1-3'));
    // Leases are held by their nodes, renewed apart.
    const leases = await kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: 'kube-node-lease' });
    assert.equal(leases.items.filter((l) => l.metadata?.name?.startsWith('f1-')).length, 30);
    // The read-only endpoint answers for one node.
    const res = await fetch(`http://127.0.0.1:${fleet.address()!.port}/pods?node=f1-3`);
    const body = (await res.json()) as { items: V1Pod[] };
    assert.deepEqual(body.items.map((p) => p.metadata?.name).sort(), ['own-f1-3', 's-a-f1-3', 's-b-f1-3', 's-c-f1-3']);
    const metrics = await (await fetch(`http://127.0.0.1:${fleet.address()!.port}/metrics`)).text();
    assert.match(metrics, /node="f1-b9"/);
    // Ordinary pods of one template run (the fleet holds their common parts once, frozen:
    // src/fleet/shared-pod-parts.ts); its /pods shows them without managedFields, which the API
    // server keeps (docs/kubelet-differences.md, "The fleet's pods").
    for (const name of ['web-1', 'web-2']) {
      await cp.adminApi.createNamespacedPod({ namespace: ns, body: { metadata: { name, namespace: ns, labels: { app: 'web' } }, spec: { nodeName: 'f1-5', containers: [{ name: 'main', image: 'nginx:1.27' }] } } });
    }
    await waitFor(
      async () => (await Promise.all(['web-1', 'web-2'].map((name) => cp.adminApi.readNamespacedPod({ namespace: ns, name })))).every((p) => p.status?.phase === 'Running'),
      'the two ordinary pods Running',
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const served = ((await (await fetch(`http://127.0.0.1:${fleet.address()!.port}/pods?node=f1-5`)).json()) as { items: V1Pod[] }).items.filter((p) => p.metadata?.name?.startsWith('web-'));
    assert.equal(served.length, 2);
    for (const pod of served) {
      assert.equal(pod.metadata?.managedFields, undefined);
      assert.equal(pod.spec?.containers[0]?.image, 'nginx:1.27');
    }
    const stored = await cp.adminApi.readNamespacedPod({ namespace: ns, name: 'web-1' });
    assert.ok((stored.metadata?.managedFields ?? []).length > 0, 'the API server keeps the managedFields');
    // The status the fleet wrote is the kubelet's in managedFields (the manager comes from the User-Agent).
    const statusManagers = (stored.metadata?.managedFields ?? []).filter((f) => f.subresource === 'status').map((f) => f.manager);
    assert.deepEqual(statusManagers, ['kubelet']);
    // Addresses come from the fleet's one range (10.128.0.0/9 by default), not a node's /16.
    assert.match(stored.status?.podIP ?? '', /^10\.(1[3-9]\d|12[89]|2\d\d)\.\d+\.\d+$/);
  });

  it('per-node credentials (system:node:<name>, NodeRestriction per node); a {node} URL answering 404 keeps that node\'s pods', async () => {
    const ns = cp.namespace;
    let failFor = '';
    const server = createServer((req, res) => {
      const node = (req.url ?? '').slice(1);
      if (node === failFor) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/yaml' }).end(manifest('web', ns));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/{node}`;
    const fleet = await startFleet({ nodeKubeconfigDir: cp.cluster.dir, templates: [{ name: 'fpn-{i}', count: PER_NODE.length, manifestURL: url }] });
    await waitFor(
      async () => {
        const mirrors = await mirrorsOf('fpn-');
        return mirrors.length === PER_NODE.length && mirrors.every((p) => p.status?.phase === 'Running');
      },
      'one Running mirror per node',
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    failFor = 'fpn-2';
    // The next fetch (20 s period) answers 404 for fpn-2: its mirror stays; no other node changes.
    const before = (await mirrorsOf('fpn-')).map((p) => `${p.metadata?.name}/${p.metadata?.uid}`).sort();
    const port = fleet.address()!.port;
    await waitFor(
      async () => /kubelet_pods_source_errors_total\{[^}]*source="http"[^}]*node="fpn-2"[^}]*\} [1-9]|kubelet_pods_source_errors_total\{[^}]*node="fpn-2"[^}]*source="http"[^}]*\} [1-9]/.test(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
      'fpn-2 fetched its URL and got the 404',
      { timeoutMs: 45_000, intervalMs: 500 },
    );
    await fleet.agent('fpn-2')!.mirrorsIdle();
    const mirror = await cp.adminApi.readNamespacedPod({ namespace: ns, name: 'web-fpn-2' });
    assert.ok(mirror.metadata?.uid);
    assert.deepEqual((await mirrorsOf('fpn-')).map((p) => `${p.metadata?.name}/${p.metadata?.uid}`).sort(), before);
  });

  it('the command: `kubelet-pods fleet --nodes 3 --node-name-prefix …` runs, SIGTERM leaves the mirrors; a bad template is refused naming the field', async () => {
    const ns = cp.namespace;
    const dir = await mkdtemp(join(tmpdir(), 'fleet-cli-'));
    await writeFile(join(dir, 'p.yaml'), manifest('cli', ns));
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const child = spawn(process.execPath, [CLI, 'fleet', '--nodes', '3', '--node-name-prefix', 'fcli-', '--kubeconfig', kubeconfig, '--pod-manifest-path', dir, '--read-only-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await waitFor(async () => (await mirrorsOf('fcli-')).filter((p) => p.status?.phase === 'Running').length === 3, 'three Running mirrors from the command', { timeoutMs: 60_000, intervalMs: 250 });
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, log);
    assert.equal((await mirrorsOf('fcli-')).length, 3, 'mirrors left in place');
    const token = JSON.parse(await (await import('node:fs/promises')).readFile(kubeconfig, 'utf8')).users[0].user.token as string;
    assert.ok(!log.includes(token), 'no token in the log');

    await writeFile(join(dir, 'fleet.yaml'), `kubeconfig: fleet.kubeconfig\ntemplates:\n  - name: "a-{i}"\n    count: 3\n  - name: "a-1"\n`);
    const bad = spawnSync(process.execPath, [CLI, 'fleet', '--config', join(dir, 'fleet.yaml')], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /templates\[1\]\.name: node "a-1" is also named by templates\[0\]\.name/);
  });
});
