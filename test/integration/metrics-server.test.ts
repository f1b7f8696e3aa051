// The real metrics-server (v0.8.0, tools/metrics-server) against our node, as in a cluster:
// it scrapes the agent's /metrics/resource at the Node's InternalIP and kubelet port with its
// token (TokenReview, then SubjectAccessReview on nodes/metrics), and serves metrics.k8s.io
// through the API server's aggregation layer, so that `kubectl top` shows the simulated usage
// and the HorizontalPodAutoscaler of kube-controller-manager scales a Deployment on it. The
// agent runs in a network namespace (the API server refuses to proxy to loopback node
// addresses); metrics-server listens on the host end of its veth pair (EndpointSlices refuse
// loopback addresses).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { kubectl } from '../helpers/kubectl.js';
import { startMetricsServer, type MetricsServer } from '../helpers/metrics-server.js';
import { startNetnsCluster, startNodeAgent, type NetnsCluster, type NetnsCommand } from '../helpers/netns-cluster.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'ms-node';
const MI = 2 ** 20;

const STATIC_POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', annotations: { 'simulation.kubelet-pods.io/usage': 'main=250m/64Mi' } },
  spec: { containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '500m', memory: '128Mi' } } }] },
};

// Each replica uses about half its 100m request (the default share): 50 % against a target of 20 %.
const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'busy', namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'busy' } },
    template: {
      metadata: { labels: { app: 'busy' } },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': NODE },
        containers: [{ name: 'main', image: 'nginx:1.27', resources: { requests: { cpu: '100m', memory: '32Mi' } } }],
      },
    },
  },
};

const HPA = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'busy', namespace: 'default' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'busy' },
    minReplicas: 1,
    maxReplicas: 4,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 20 } } }],
  },
};

/** The wait's result, or its failure with what `explain` tells at that moment. */
async function explained<T>(wait: Promise<T>, explain: () => Promise<string>): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await explain()}`, { cause: err });
  }
}

describe('metrics-server over our node: kubectl top and a HorizontalPodAutoscaler', { timeout: 420_000 }, () => {
  let env: NetnsCluster;
  let agent: NetnsCommand | undefined;
  let metricsServer: MetricsServer | undefined;
  const admin = (...args: string[]) => kubectl(env.cluster.adminKubeconfig, ...args);

  before(async () => {
    env = await startNetnsCluster([NODE], 'kp-metrics-server-');
    await writeFile(join(env.dir, 'web.yaml'), stringify(STATIC_POD));
    agent = await startNodeAgent(env, { node: NODE, manifestPath: join(env.dir, 'web.yaml'), waitForPod: `web-${NODE}` });
    metricsServer = await startMetricsServer({ adminKubeconfig: env.cluster.adminKubeconfig, address: env.netns.hostIP, dir: join(env.dir, 'metrics-server') });
  });

  after(async () => {
    await metricsServer?.stop();
    await agent?.stop();
    await env?.dispose();
  });

  it('kubectl top nodes and kubectl top pods show the simulated usage', async () => {
    // Its first CPU numbers need two scrapes (a rate), 10 s apart.
    const pods = await explained(
      waitFor(
        async () => {
          const out = await admin('top', 'pods', '-n', 'default', '--no-headers').catch(() => '');
          return out.includes(`web-${NODE}`) ? out : undefined;
        },
        `kubectl top pods listing web-${NODE}`,
        { timeoutMs: 90_000, intervalMs: 2000 },
      ),
      async () => `metrics-server log:\n${await metricsServer!.logTail()}`,
    );
    assert.match(pods, new RegExp(`^web-${NODE}\\s+250m\\s+64Mi\\s*$`, 'm'));
    const nodes = await admin('top', 'nodes', '--no-headers');
    // The pod's 250m and 64Mi plus the node's own 50m and 256Mi.
    const row = new RegExp(`^${NODE}\\s+(\\d+)m\\s+\\d+%\\s+(\\d+)Mi\\s+\\d+%\\s*$`, 'm').exec(nodes);
    assert.ok(row !== null, nodes);
    assert.equal(Number(row[1]), 300);
    assert.equal(Number(row[2]) * MI, 64 * MI + 256 * MI);
  });

  it('an HPA targeting 20 % CPU scales a Deployment whose replicas use about 50 % of their request', async () => {
    const file = join(env.dir, 'busy.yaml');
    await writeFile(file, [DEPLOYMENT, HPA].map((o) => stringify(o)).join('---\n'));
    await admin('apply', '-f', file);
    const replicas = await explained(
      waitFor(
        async () => {
          const n = Number(await admin('get', 'deployment', 'busy', '-n', 'default', '-o', 'jsonpath={.spec.replicas}'));
          return n > 1 ? n : undefined;
        },
        'the HPA scaling busy above 1 replica',
        { timeoutMs: 180_000, intervalMs: 3000 },
      ),
      async () => `${await admin('describe', 'hpa', 'busy', '-n', 'default').catch((e: Error) => e.message)}\nmetrics-server log:\n${await metricsServer!.logTail()}`,
    );
    assert.ok(replicas >= 3 && replicas <= 4, `${replicas} replicas`);
    const hpa = JSON.parse(await admin('get', 'hpa', 'busy', '-n', 'default', '-o', 'json')) as { status: { currentMetrics?: { resource?: { current?: { averageUtilization?: number } } }[] } };
    const utilization = hpa.status.currentMetrics?.[0]?.resource?.current?.averageUtilization;
    assert.ok(utilization !== undefined && utilization >= 20, `utilization ${utilization}`);
  });
});
