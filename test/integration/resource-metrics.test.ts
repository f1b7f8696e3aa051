// /metrics/resource and /stats/summary end to end, where metrics-server and `kubectl top` read
// them: through the real API server's node proxy to the agent's kubelet port, and on its
// read-only port. As in node-proxy.test.ts, the agent runs in a network namespace of this
// test's own (the API server refuses to proxy to loopback node addresses), its Node's
// InternalIP the namespace end of a veth pair; no traffic leaves the machine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kubectl } from '../helpers/kubectl.js';
import { startNetnsCluster, startNodeAgent, type NetnsCluster, type NetnsCommand } from '../helpers/netns-cluster.js';

const NODE = 'rm-node';
const OTHER = 'rm-other';
const READ_ONLY_PORT = 10255;

// `main` is told its usage by the annotation; `side` uses the default half of its requests.
const MANIFEST = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', annotations: { 'simulation.kubelet-pods.io/usage': 'main=250m/64Mi' } },
  spec: {
    containers: [
      { name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '500m', memory: '128Mi' } } },
      { name: 'side', image: 'busybox:1.36', resources: { requests: { cpu: '100m', memory: '32Mi' } } },
    ],
  },
};

interface Summary {
  node: { nodeName: string; cpu: { usageNanoCores: number; usageCoreNanoSeconds: number }; memory: { workingSetBytes: number; availableBytes?: number } };
  pods: Array<{
    podRef: { name: string; namespace: string; uid: string };
    containers: Array<{ name: string; cpu: { usageNanoCores: number; usageCoreNanoSeconds: number }; memory: { workingSetBytes: number } }>;
  }>;
}

/** The value and time of one series of the text format. */
function sample(text: string, series: string): { value: number; ms: number } {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line !== undefined, `${series} in:\n${text}`);
  const [, value, ms] = line.split(' ');
  return { value: Number(value), ms: Number(ms) };
}

describe('/metrics/resource and /stats/summary through the API server and on the read-only port', { timeout: 240_000 }, () => {
  let env: NetnsCluster;
  let agent: NetnsCommand | undefined;

  before(async () => {
    env = await startNetnsCluster([NODE, OTHER], 'kp-resource-metrics-');
    await writeFile(join(env.dir, 'web.yaml'), stringify(MANIFEST));
    agent = await startNodeAgent(env, { node: NODE, manifestPath: join(env.dir, 'web.yaml'), waitForPod: `web-${NODE}`, extraArgs: ['--read-only-port', String(READ_ONLY_PORT)] });
  });

  after(async () => {
    await agent?.stop();
    await env?.dispose();
  });

  it('kubectl get --raw …/proxy/metrics/resource: the annotated usage, a CPU counter growing at its rate, the node above its pods', async () => {
    const path = `/api/v1/nodes/${NODE}/proxy/metrics/resource`;
    const labels = `{container="main",namespace="default",pod="web-${NODE}"}`;
    const first = await kubectl(env.cluster.adminKubeconfig, 'get', '--raw', path);
    assert.match(first, /^# HELP container_cpu_usage_seconds_total \[STABLE\] Cumulative cpu time consumed by the container in core-seconds$/m);
    assert.match(first, /^# TYPE container_cpu_usage_seconds_total counter$/m);
    assert.match(first, /^resource_scrape_error 0$/m);
    assert.equal(sample(first, `container_memory_working_set_bytes${labels}`).value, 64 * 2 ** 20);
    assert.match(first, new RegExp(`^container_start_time_seconds\\{container="side",namespace="default",pod="web-${NODE}"\\} \\d\\.\\d+e\\+09$`, 'm'));
    const cpu1 = sample(first, `container_cpu_usage_seconds_total${labels}`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const second = await kubectl(env.cluster.adminKubeconfig, 'get', '--raw', path);
    const cpu2 = sample(second, `container_cpu_usage_seconds_total${labels}`);
    assert.ok(cpu2.ms > cpu1.ms, 'each scrape is a new sample');
    // What metrics-server computes: the counter's rise over the samples' time apart.
    const rate = (cpu2.value - cpu1.value) / ((cpu2.ms - cpu1.ms) / 1000);
    assert.ok(Math.abs(rate - 0.25) < 0.001, `rate ${rate} cores`);
    const pod = sample(second, `pod_memory_working_set_bytes{namespace="default",pod="web-${NODE}"}`).value;
    const side = sample(second, `container_memory_working_set_bytes{container="side",namespace="default",pod="web-${NODE}"}`).value;
    assert.ok(Math.abs(side / (16 * 2 ** 20) - 1) <= 0.1, `side: half its 32Mi request, give or take the noise (${side})`);
    assert.equal(pod, 64 * 2 ** 20 + side);
    assert.ok(sample(second, 'node_memory_working_set_bytes').value > pod, 'the node holds its pods and its own share');
  });

  it('kubectl get --raw …/proxy/stats/summary: the node and the pod with its containers\' simulated numbers', async () => {
    const summary = JSON.parse(await kubectl(env.cluster.adminKubeconfig, 'get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`)) as Summary;
    assert.equal(summary.node.nodeName, NODE);
    assert.ok(summary.node.memory.availableBytes! > 0, 'against the Node capacity');
    assert.deepEqual(summary.pods.map((p) => [p.podRef.namespace, p.podRef.name]), [['default', `web-${NODE}`]]);
    const main = summary.pods[0]!.containers.find((c) => c.name === 'main')!;
    assert.equal(main.cpu.usageNanoCores, 250_000_000);
    assert.equal(main.memory.workingSetBytes, 64 * 2 ** 20);
    assert.ok(main.cpu.usageCoreNanoSeconds > 0);
    assert.deepEqual(summary.pods[0]!.containers.map((c) => c.name), ['main', 'side']);
    // The static pod's own UID (the mirror's differs), as the kubelet reports it.
    const mirror = JSON.parse((await env.api(`/api/v1/namespaces/default/pods/web-${NODE}`, env.cluster.adminKubeconfig)).body) as { metadata: { uid: string; annotations: Record<string, string> } };
    assert.equal(summary.pods[0]!.podRef.uid, mirror.metadata.annotations['kubernetes.io/config.mirror']);
  });

  it('the read-only port serves both without authentication; another node is refused them through the proxy', async () => {
    const metrics = await fetch(`http://${env.netns.nsIP}:${READ_ONLY_PORT}/metrics/resource`);
    assert.equal(metrics.status, 200);
    assert.equal(metrics.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8; escaping=underscores');
    assert.match(await metrics.text(), new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="default",pod="web-${NODE}"\\} 6\\.7108864e\\+07 \\d+$`, 'm'));
    const summary = await fetch(`http://${env.netns.nsIP}:${READ_ONLY_PORT}/stats/summary`);
    assert.equal(summary.status, 200);
    assert.equal(((await summary.json()) as Summary).node.nodeName, NODE);
    for (const path of [`/api/v1/nodes/${NODE}/proxy/metrics/resource`, `/api/v1/nodes/${NODE}/proxy/stats/summary`]) {
      const r = await env.api(path, env.cluster.nodeKubeconfigs[OTHER]!);
      assert.equal(r.status, 403, `${path}: ${r.body}`);
    }
  });
});
