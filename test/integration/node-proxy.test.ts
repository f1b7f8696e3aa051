// The kubelet port end to end, the way Prometheus and kubectl reach kubelets: through the API
// server's node proxy and pods/log. The API server refuses to proxy to loopback node
// addresses, so the agent runs in a network namespace of this test's own, joined by a veth
// pair: its Node's InternalIP is the namespace end, and it reaches the API server at the host
// end (the control plane relays that address to its loopback port). No traffic leaves the
// machine. The API server authenticates to the agent with its kubelet client certificate,
// which the agent checks against the cluster CA (clientCAFile) and authorizes with a
// SubjectAccessReview; an identity without nodes/proxy is refused by the API server itself.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { podManifestYaml } from '../helpers/manifests.js';
import type { TestNetns } from '../helpers/netns.js';
import { kubectl } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';
import { startNetnsCluster, startNodeAgent, type NetnsCluster, type NetnsCommand } from '../helpers/netns-cluster.js';

const NODE = 'np-node';
const OTHER = 'np-other';

describe('the kubelet port through the API server (node proxy, pods/log)', { timeout: 240_000 }, () => {
  let env: NetnsCluster;
  let netns: TestNetns;
  let cluster: LocalCluster;
  let agent: NetnsCommand | undefined;
  const api = (path: string, kubeconfig: string) => env.api(path, kubeconfig);

  before(async () => {
    env = await startNetnsCluster([NODE, OTHER], 'kp-node-proxy-');
    ({ netns, cluster } = env);
    await writeFile(join(env.dir, 'web.yaml'), podManifestYaml('web', 'default'));
    agent = await startNodeAgent(env, { node: NODE, manifestPath: join(env.dir, 'web.yaml'), waitForPod: `web-${NODE}` });
  });

  after(async () => {
    await agent?.stop();
    await env?.dispose();
  });

  it('the Node reports the namespace address and the kubelet port it serves', async () => {
    const node = JSON.parse((await api(`/api/v1/nodes/${NODE}`, cluster.adminKubeconfig)).body) as {
      status: { addresses: { type: string; address: string }[]; daemonEndpoints: { kubeletEndpoint: { Port: number } } };
    };
    assert.deepEqual(node.status.addresses.find((a) => a.type === 'InternalIP')?.address, netns.nsIP);
    assert.equal(node.status.daemonEndpoints.kubeletEndpoint.Port, 10250);
  });

  it('the admin: /proxy/metrics, /proxy/pods and /proxy/configz through the node proxy', async () => {
    const metrics = await api(`/api/v1/nodes/${NODE}/proxy/metrics`, cluster.adminKubeconfig);
    assert.equal(metrics.status, 200, `${metrics.body}\nagent log:\n${agent!.output()}`);
    assert.match(metrics.body, /^kubelet_mirror_pods \d+$/m);
    // The gauge follows the mirror at the next housekeeping (every 2 s).
    await waitFor(async () => /^kubelet_mirror_pods 1$/m.test((await api(`/api/v1/nodes/${NODE}/proxy/metrics`, cluster.adminKubeconfig)).body), 'kubelet_mirror_pods 1 through the proxy', { timeoutMs: 10_000, intervalMs: 200 });
    const pods = await api(`/api/v1/nodes/${NODE}/proxy/pods`, cluster.adminKubeconfig);
    assert.equal(pods.status, 200, pods.body);
    const list = JSON.parse(pods.body) as { kind: string; items: { metadata: { name: string } }[] };
    assert.equal(list.kind, 'PodList');
    assert.deepEqual(list.items.map((p) => p.metadata.name), [`web-${NODE}`]);
    const configz = await api(`/api/v1/nodes/${NODE}/proxy/configz`, cluster.adminKubeconfig);
    assert.equal(configz.status, 200, configz.body);
    assert.equal((JSON.parse(configz.body) as { kubeletconfig: { port: number } }).kubeletconfig.port, 10250);
  });

  it('the admin: pods/log of the mirror pod (kubectl logs) prints what the simulated runtime wrote', async () => {
    const logs = await api(`/api/v1/namespaces/default/pods/web-${NODE}/log?container=main`, cluster.adminKubeconfig);
    assert.deepEqual(logs, { status: 200, body: 'started container "main" (image nginx:1.27)\n' });
    const tail = await api(`/api/v1/namespaces/default/pods/web-${NODE}/log?timestamps=true&tailLines=1`, cluster.adminKubeconfig);
    assert.equal(tail.status, 200, tail.body);
    assert.match(tail.body, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z started container "main"/);
  });

  // The same with kubectl itself.
  it('kubectl get --raw …/proxy/metrics and kubectl logs on the mirror pod, as the admin and as another node', async () => {
    const metrics = await kubectl(cluster.adminKubeconfig, 'get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`);
    assert.match(metrics, /^kubelet_desired_pods\{static="true"\} 1$/m);
    const logs = await kubectl(cluster.adminKubeconfig, 'logs', '-n', 'default', `web-${NODE}`);
    assert.equal(logs, 'started container "main" (image nginx:1.27)\n');
    const other = cluster.nodeKubeconfigs[OTHER]!;
    await assert.rejects(kubectl(other, 'get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics`), (err: { stderr?: string }) => /Forbidden/.test(err.stderr ?? ''));
    await assert.rejects(kubectl(other, 'logs', '-n', 'default', `web-${NODE}`), (err: { stderr?: string }) => /forbidden/i.test(err.stderr ?? ''));
  });

  it('an identity without the right (another node) is refused with 403', async () => {
    const other = cluster.nodeKubeconfigs[OTHER]!;
    for (const path of [`/api/v1/nodes/${NODE}/proxy/metrics`, `/api/v1/nodes/${NODE}/proxy/pods`, `/api/v1/namespaces/default/pods/web-${NODE}/log`]) {
      const r = await api(path, other);
      assert.equal(r.status, 403, `${path}: ${r.body}`);
    }
  });
});
