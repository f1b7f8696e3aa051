// A fleet with `kubeletPorts: true`: each node serves its own kubelet port, reported in its
// Node, so the API server's node proxy (and metrics-server, which dials the same address and
// port) reaches each node's own /metrics/resource and /stats/summary. The fleet runs in a
// network namespace of this test's own (the API server refuses to proxy to loopback node
// addresses), with per-node credentials (their TokenReviews and SubjectAccessReviews are the
// kubelet's own rights) and the cluster CA for the API server's client certificate.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { podManifestYaml } from '../helpers/manifests.js';
import type { TestNetns } from '../helpers/netns.js';
import { kubectl } from '../helpers/kubectl.js';
import { runInNetns, startNetnsCluster, waitForRunningPod, type NetnsCluster, type NetnsCommand } from '../helpers/netns-cluster.js';

const NODES = ['rmf-0', 'rmf-1'];

describe('a fleet with kubeletPorts: each node\'s /metrics/resource and /stats/summary through the node proxy', { timeout: 240_000 }, () => {
  let env: NetnsCluster;
  let netns: TestNetns;
  let cluster: LocalCluster;
  let fleet: NetnsCommand | undefined;
  const api = (path: string) => env.api(path);

  before(async () => {
    env = await startNetnsCluster(NODES, 'kp-fleet-resource-');
    ({ netns, cluster } = env);
    const { dir } = env;
    await mkdir(join(dir, 'creds'));
    await mkdir(join(dir, 'manifests'));
    for (const node of NODES) await env.writeNodeKubeconfig(node, join(dir, 'creds', `${node}.kubeconfig`));
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
    fleet = runInNetns(netns, ['fleet', '--config', join(dir, 'fleet.yaml')]);
    for (const node of NODES) await waitForRunningPod(api, 'default', `web-${node}`, fleet);
  });

  after(async () => {
    await fleet?.stop();
    await env?.dispose();
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
  it('one credential: with system:auth-delegator bound to the fleet ServiceAccount, its nodes answer through the proxy too', async () => {
    const { dir } = env;
    const token = join(dir, 'fleet.kubeconfig');
    await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: token });
    // The kubelet ports ask TokenReviews and SubjectAccessReviews with the fleet's credential.
    await kubectl(cluster.adminKubeconfig, 'create', 'clusterrolebinding', 'kubelet-pods-fleet-auth-delegator', '--clusterrole=system:auth-delegator', '--serviceaccount=kubelet-pods-fleet:kubelet-pods-fleet');
    const kubeconfig = join(dir, 'fleet-netns.kubeconfig');
    await writeFile(kubeconfig, (await readFile(token, 'utf8')).replace(cluster.server, `https://${netns.hostIP}:${cluster.securePort}`));
    await writeFile(
      join(dir, 'fleet-one.yaml'),
      stringify({ kubeconfig, readOnlyPort: 0, address: netns.nsIP, kubeletPorts: true, clientCAFile: cluster.caFile, templates: [{ name: 'rmc-{i}', count: 1, staticPodPath: join(dir, 'manifests') }] }),
    );
    const one = runInNetns(netns, ['fleet', '--config', join(dir, 'fleet-one.yaml')]);
    try {
      await waitForRunningPod(api, 'default', 'web-rmc-0', one);
      const summary = JSON.parse(await kubectl(cluster.adminKubeconfig, 'get', '--raw', '/api/v1/nodes/rmc-0/proxy/stats/summary')) as { node: { nodeName: string }; pods: { podRef: { name: string } }[] };
      assert.equal(summary.node.nodeName, 'rmc-0');
      assert.deepEqual(summary.pods.map((p) => p.podRef.name), ['web-rmc-0']);
    } finally {
      await one.stop();
    }
  });
});
