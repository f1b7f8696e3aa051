// A fleet with `kubeletPorts: true`: each node serves its own kubelet port, reported in its
// Node, so the API server's node proxy (and metrics-server, which dials the same address and
// port) reaches each node's own /metrics/resource and /stats/summary. The fleet runs in a
// network namespace of this test's own (the API server refuses to proxy to loopback node
// addresses), with per-node credentials (their TokenReviews and SubjectAccessReviews are the
// kubelet's own rights) and the cluster CA for the API server's client certificate.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startLocalCluster, type LocalCluster } from '../../src/cluster/local-cluster.js';
import { kubeConfigFromFile } from '../helpers/control-plane.js';
import { httpsGet } from '../helpers/https-get.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { createTestNetns, type TestNetns } from '../helpers/netns.js';
import { kubectl } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const NODES = ['rmf-0', 'rmf-1'];

describe('a fleet with kubeletPorts: each node\'s /metrics/resource and /stats/summary through the node proxy', { timeout: 240_000 }, () => {
  let netns: TestNetns;
  let cluster: LocalCluster;
  let dir: string;
  let fleet: ChildProcess | undefined;
  let fleetLog = '';
  let ca: string;
  const api = (path: string) => httpsGet(`${cluster.server}${path}`, { token: kubeConfigFromFile(cluster.adminKubeconfig).getCurrentUser()!.token!, ca });

  before(async () => {
    netns = await createTestNetns();
    cluster = await startLocalCluster({ nodes: NODES, extraAddresses: [netns.hostIP] });
    ca = await readFile(cluster.caFile, 'utf8');
    dir = await mkdtemp(join(tmpdir(), 'kp-fleet-resource-'));
    await mkdir(join(dir, 'creds'));
    await mkdir(join(dir, 'manifests'));
    for (const node of NODES) {
      const original = await readFile(cluster.nodeKubeconfigs[node]!, 'utf8');
      await writeFile(join(dir, 'creds', `${node}.kubeconfig`), original.replace(cluster.server, `https://${netns.hostIP}:${cluster.securePort}`));
    }
    await writeFile(join(dir, 'manifests', 'web.yaml'), podManifestYaml('web', 'default', 'nginx:1.27', { annotations: { 'simulation.kubelet-pods.io/usage': 'main=300m/48Mi' } }));
    await writeFile(
      join(dir, 'fleet.yaml'),
      stringify({
        nodeKubeconfigDir: join(dir, 'creds'),
        readOnlyPort: 0,
        address: netns.nsIP,
        kubeletPorts: true,
        clientCAFile: cluster.caFile,
        templates: [{ name: 'rmf-{i}', count: 2, staticPodPath: join(dir, 'manifests') }],
      }),
    );
    fleet = spawn('ip', ['netns', 'exec', netns.name, process.execPath, CLI, 'fleet', '--config', join(dir, 'fleet.yaml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    fleet.stdout!.on('data', (d: Buffer) => (fleetLog += d.toString()));
    fleet.stderr!.on('data', (d: Buffer) => (fleetLog += d.toString()));
    for (const node of NODES) {
      await waitFor(
        async () => {
          const r = await api(`/api/v1/namespaces/default/pods/web-${node}`);
          return r.status === 200 && (JSON.parse(r.body) as { status?: { phase?: string } }).status?.phase === 'Running';
        },
        `the mirror pod web-${node} Running (fleet log:\n${fleetLog})`,
        { timeoutMs: 60_000, intervalMs: 200 },
      );
    }
  });

  after(async () => {
    if (fleet !== undefined && fleet.exitCode === null) {
      const exited = new Promise((resolve) => fleet!.once('exit', resolve));
      fleet.kill('SIGTERM');
      const timer = setTimeout(() => fleet!.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await cluster?.dispose();
    await netns?.remove();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('each Node reports the fleet address and a kubelet port of its own', async () => {
    const ports = new Set<number>();
    for (const node of NODES) {
      const n = JSON.parse((await api(`/api/v1/nodes/${node}`)).body) as {
        status: { addresses: { type: string; address: string }[]; daemonEndpoints: { kubeletEndpoint: { Port: number } } };
      };
      assert.equal(n.status.addresses.find((a) => a.type === 'InternalIP')?.address, netns.nsIP);
      assert.ok(n.status.daemonEndpoints.kubeletEndpoint.Port > 0, `${node}: ${JSON.stringify(n.status.daemonEndpoints)}`);
      ports.add(n.status.daemonEndpoints.kubeletEndpoint.Port);
    }
    assert.equal(ports.size, NODES.length);
  });

  it('kubectl get --raw …/proxy/metrics/resource and …/proxy/stats/summary answer for that node and its pods only', async () => {
    for (const node of NODES) {
      const metrics = await kubectl(cluster.adminKubeconfig, 'get', '--raw', `/api/v1/nodes/${node}/proxy/metrics/resource`);
      assert.match(metrics, new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="default",pod="web-${node}"\\} 5\\.0331648e\\+07 \\d+$`, 'm'), metrics);
      assert.match(metrics, new RegExp(`^container_cpu_usage_seconds_total\\{container="main",namespace="default",pod="web-${node}"\\} [\\d.e+-]+ \\d+$`, 'm'));
      const others = NODES.filter((n) => n !== node).map((n) => `pod="web-${n}"`);
      for (const other of others) assert.ok(!metrics.includes(other), `${node} shows only its own pods`);
      const summary = JSON.parse(await kubectl(cluster.adminKubeconfig, 'get', '--raw', `/api/v1/nodes/${node}/proxy/stats/summary`)) as {
        node: { nodeName: string };
        pods: { podRef: { name: string }; containers: { name: string; cpu: { usageNanoCores: number } }[] }[];
      };
      assert.equal(summary.node.nodeName, node);
      assert.deepEqual(summary.pods.map((p) => p.podRef.name), [`web-${node}`]);
      assert.equal(summary.pods[0]!.containers[0]!.cpu.usageNanoCores, 300_000_000);
    }
  });
});
