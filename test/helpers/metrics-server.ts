// metrics-server v0.8.0 (tools/metrics-server), the add-on behind `kubectl top` and the
// HorizontalPodAutoscaler, as a child process registered with the local control plane's
// aggregation layer: an APIService for metrics.k8s.io whose Service has no selector and one
// EndpointSlice naming where the process listens (the aggregator dials endpoints directly:
// there is no kube-proxy). It scrapes every Node's /metrics/resource at its InternalIP and
// kubelet port, as it does in a cluster. For tests only.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ensureGoTool, type GoTool, type GoToolBuildOptions } from '../../src/cluster/go-tool-build.js';
import { logTail } from '../../src/cluster/tool-process.js';
import { kubectl } from './kubectl.js';
import { waitFor } from './wait.js';

export const METRICS_SERVER_TOOL: GoTool = {
  id: 'metrics-server',
  binaryName: 'metrics-server',
  title: 'metrics-server (scrapes /metrics/resource, serves metrics.k8s.io)',
  binaryEnv: 'KUBELET_PODS_METRICS_SERVER',
  approxPackages: 1300,
  firstBuildEstimate: 'a few minutes on 2 cores once the control plane is built',
};

export interface MetricsServerOptions {
  /** The admin's kubeconfig: metrics-server reads Nodes with it and sends its token to kubelets. */
  adminKubeconfig: string;
  /** A non-loopback address of this machine the API server can reach (EndpointSlices refuse loopback). */
  address: string;
  /** Its state (serving certificate, log). */
  dir: string;
  /** How often it scrapes the nodes; 10 s (its minimum) by default. */
  resolutionSeconds?: number;
  build?: GoToolBuildOptions;
}

export interface MetricsServer {
  /** The last lines of its log. */
  logTail(): Promise<string>;
  /** Removes the APIService and stops the process. */
  stop(): Promise<void>;
}

/** Builds (once) and starts metrics-server, resolving when the API server reports metrics.k8s.io Available. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { path: binary } = await ensureGoTool(METRICS_SERVER_TOOL, options.build);
  await mkdir(options.dir, { recursive: true });
  const port = await freePort(options.address);
  const logFile = join(options.dir, 'metrics-server.log');
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(
      binary,
      [
        `--bind-address=${options.address}`,
        `--secure-port=${port}`,
        `--cert-dir=${join(options.dir, 'certs')}`,
        `--kubeconfig=${options.adminKubeconfig}`,
        `--authentication-kubeconfig=${options.adminKubeconfig}`,
        `--authorization-kubeconfig=${options.adminKubeconfig}`,
        // Kubelets serve self-signed certificates (ours and the kubelet's own by default).
        '--kubelet-insecure-tls',
        '--kubelet-preferred-address-types=InternalIP',
        '--kubelet-use-node-status-port',
        `--metric-resolution=${options.resolutionSeconds ?? 10}s`,
        // It must be shorter than the resolution.
        '--kubelet-request-timeout=5s',
        '--v=2',
      ],
      { stdio: ['ignore', 'ignore', logFd] },
    );
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const objects = join(options.dir, 'apiservice.yaml');
  await writeFile(objects, registration(options.address, port).map((o) => stringify(o)).join('---\n'));
  const stop = async (): Promise<void> => {
    await kubectl(options.adminKubeconfig, 'delete', '--ignore-not-found', '-f', objects).catch(() => undefined);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    await kubectl(options.adminKubeconfig, 'apply', '-f', objects);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`metrics-server exited with ${child.exitCode}:\n${await logTail(logFile)}`);
        const out = await kubectl(options.adminKubeconfig, 'get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'jsonpath={.status.conditions[?(@.type=="Available")].status}').catch(() => '');
        return out === 'True';
      },
      'the APIService v1beta1.metrics.k8s.io Available',
      { timeoutMs: 90_000, intervalMs: 1000 },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\nmetrics-server log:\n${await logTail(logFile)}`, { cause: err });
  }
  return { logTail: () => logTail(logFile, 40), stop };
}

/** The Service, its one EndpointSlice and the APIService that route metrics.k8s.io to the process. */
function registration(address: string, port: number): object[] {
  const meta = { name: 'metrics-server', namespace: 'kube-system' };
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { ports: [{ name: 'https', port: 443, targetPort: port, protocol: 'TCP' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'metrics-server-local', namespace: 'kube-system', labels: { 'kubernetes.io/service-name': 'metrics-server', 'endpointslice.kubernetes.io/managed-by': 'kubelet-pods-tests' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.k8s.io' },
      spec: { service: { ...meta, port: 443 }, group: 'metrics.k8s.io', version: 'v1beta1', insecureSkipTLSVerify: true, groupPriorityMinimum: 100, versionPriority: 100 },
    },
  ];
}

function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
