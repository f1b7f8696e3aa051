// /metrics/resource and /stats/summary end to end, where metrics-server and `kubectl top` read
// them: through the real API server's node proxy to the agent's kubelet port, and on its
// read-only port. As in node-proxy.test.ts, the agent runs in a network namespace of this
// test's own (the API server refuses to proxy to loopback node addresses), its Node's
// InternalIP the namespace end of a veth pair; no traffic leaves the machine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { startLocalCluster, type LocalCluster } from '../../src/cluster/local-cluster.js';
import { kubeConfigFromFile } from '../helpers/control-plane.js';
import { httpsGet } from '../helpers/https-get.js';
import { createTestNetns, type TestNetns } from '../helpers/netns.js';
import { kubectl } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
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
  let netns: TestNetns;
  let cluster: LocalCluster;
  let dir: string;
  let agent: ChildProcess | undefined;
  let agentLog = '';
  let ca: string;
  const token = (kubeconfig: string): string => kubeConfigFromFile(kubeconfig).getCurrentUser()!.token!;
  const api = (path: string, kubeconfig: string) => httpsGet(`${cluster.server}${path}`, { token: token(kubeconfig), ca });

  before(async () => {
    netns = await createTestNetns();
    cluster = await startLocalCluster({ nodes: [NODE, OTHER], extraAddresses: [netns.hostIP] });
    ca = await readFile(cluster.caFile, 'utf8');
    dir = await mkdtemp(join(tmpdir(), 'kp-resource-metrics-'));
    await writeFile(join(dir, 'web.yaml'), stringify(MANIFEST));
    const kubeconfig = join(dir, 'node.kubeconfig');
    const original = await readFile(cluster.nodeKubeconfigs[NODE]!, 'utf8');
    await writeFile(kubeconfig, original.replace(cluster.server, `https://${netns.hostIP}:${cluster.securePort}`));
    const config = join(dir, 'config.yaml');
    await writeFile(config, stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', authentication: { x509: { clientCAFile: cluster.caFile } } }));
    agent = spawn(
      'ip',
      ['netns', 'exec', netns.name, process.execPath, CLI, 'run', '--kubeconfig', kubeconfig, '--hostname-override', NODE, '--config', config,
        '--pod-manifest-path', join(dir, 'web.yaml'), '--node-ip', netns.nsIP, '--address', netns.nsIP, '--healthz-port', '0', '--read-only-port', String(READ_ONLY_PORT)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stdout!.on('data', (d: Buffer) => (agentLog += d.toString()));
    agent.stderr!.on('data', (d: Buffer) => (agentLog += d.toString()));
    await waitFor(
      async () => {
        const r = await api(`/api/v1/namespaces/default/pods/web-${NODE}`, cluster.adminKubeconfig);
        return r.status === 200 && (JSON.parse(r.body) as { status?: { phase?: string } }).status?.phase === 'Running';
      },
      `the mirror pod web-${NODE} Running (agent log:\n${agentLog})`,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  });

  after(async () => {
    if (agent !== undefined && agent.exitCode === null) {
      const exited = new Promise((resolve) => agent!.once('exit', resolve));
      agent.kill('SIGTERM');
      const timer = setTimeout(() => agent!.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await cluster?.dispose();
    await netns?.remove();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('kubectl get --raw …/proxy/metrics/resource: the annotated usage, a CPU counter growing at its rate, the node above its pods', async () => {
    const path = `/api/v1/nodes/${NODE}/proxy/metrics/resource`;
    const labels = `{container="main",namespace="default",pod="web-${NODE}"}`;
    const first = await kubectl(cluster.adminKubeconfig, 'get', '--raw', path);
    assert.match(first, /^# HELP container_cpu_usage_seconds_total \[STABLE\] Cumulative cpu time consumed by the container in core-seconds$/m);
    assert.match(first, /^# TYPE container_cpu_usage_seconds_total counter$/m);
    assert.match(first, /^resource_scrape_error 0$/m);
    assert.equal(sample(first, `container_memory_working_set_bytes${labels}`).value, 64 * 2 ** 20);
    assert.match(first, new RegExp(`^container_start_time_seconds\\{container="side",namespace="default",pod="web-${NODE}"\\} \\d\\.\\d+e\\+09$`, 'm'));
    const cpu1 = sample(first, `container_cpu_usage_seconds_total${labels}`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const second = await kubectl(cluster.adminKubeconfig, 'get', '--raw', path);
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
    const summary = JSON.parse(await kubectl(cluster.adminKubeconfig, 'get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`)) as Summary;
    assert.equal(summary.node.nodeName, NODE);
    assert.ok(summary.node.memory.availableBytes! > 0, 'against the Node capacity');
    assert.deepEqual(summary.pods.map((p) => [p.podRef.namespace, p.podRef.name]), [['default', `web-${NODE}`]]);
    const main = summary.pods[0]!.containers.find((c) => c.name === 'main')!;
    assert.equal(main.cpu.usageNanoCores, 250_000_000);
    assert.equal(main.memory.workingSetBytes, 64 * 2 ** 20);
    assert.ok(main.cpu.usageCoreNanoSeconds > 0);
    assert.deepEqual(summary.pods[0]!.containers.map((c) => c.name), ['main', 'side']);
    // The static pod's own UID (the mirror's differs), as the kubelet reports it.
    const mirror = JSON.parse((await api(`/api/v1/namespaces/default/pods/web-${NODE}`, cluster.adminKubeconfig)).body) as { metadata: { uid: string; annotations: Record<string, string> } };
    assert.equal(summary.pods[0]!.podRef.uid, mirror.metadata.annotations['kubernetes.io/config.mirror']);
  });

  it('the read-only port serves both without authentication; another node is refused them through the proxy', async () => {
    const metrics = await fetch(`http://${netns.nsIP}:${READ_ONLY_PORT}/metrics/resource`);
    assert.equal(metrics.status, 200);
    assert.equal(metrics.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8; escaping=underscores');
    assert.match(await metrics.text(), new RegExp(`^container_memory_working_set_bytes\\{container="main",namespace="default",pod="web-${NODE}"\\} 6\\.7108864e\\+07 \\d+$`, 'm'));
    const summary = await fetch(`http://${netns.nsIP}:${READ_ONLY_PORT}/stats/summary`);
    assert.equal(summary.status, 200);
    assert.equal(((await summary.json()) as Summary).node.nodeName, NODE);
    for (const path of [`/api/v1/nodes/${NODE}/proxy/metrics/resource`, `/api/v1/nodes/${NODE}/proxy/stats/summary`]) {
      const r = await api(path, cluster.nodeKubeconfigs[OTHER]!);
      assert.equal(r.status, 403, `${path}: ${r.body}`);
    }
  });
});
