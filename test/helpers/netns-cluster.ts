// What the node proxy tests share: a local control plane reachable from a test network
// namespace (netns.ts), node kubeconfigs aimed at it from there, a kubelet-pods command (`run`,
// `fleet`) inside the namespace with its output kept for failure messages, and the wait for a
// pod to be Running as the API server shows it.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLocalCluster, type LocalCluster } from '../../src/cluster/local-cluster.js';
import { kubeConfigFromFile } from './control-plane.js';
import { httpsGet } from './https-get.js';
import { createTestNetns, type TestNetns } from './netns.js';
import { waitFor } from './wait.js';

const CLI = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

export interface NetnsCommand {
  /** What the command wrote so far (standard output and error). */
  output(): string;
  /** SIGTERM, SIGKILL after 10 s; resolves when it has exited. */
  stop(): Promise<void>;
}

/** Runs `kubelet-pods …args` (the built CLI) in the namespace. */
export function runInNetns(netns: TestNetns, args: readonly string[]): NetnsCommand {
  const child = spawn('ip', ['netns', 'exec', netns.name, process.execPath, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return {
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits (60 s) until the API server shows the pod Running; the command's output names a failure. */
export async function waitForRunningPod(
  api: (path: string) => Promise<{ status: number; body: string }>,
  namespace: string,
  name: string,
  command: NetnsCommand,
): Promise<void> {
  try {
    await waitFor(
      async () => {
        const r = await api(`/api/v1/namespaces/${namespace}/pods/${name}`);
        return r.status === 200 && (JSON.parse(r.body) as { status?: { phase?: string } }).status?.phase === 'Running';
      },
      `the pod ${namespace}/${name} Running`,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message} (output:\n${command.output()})`, { cause: err });
  }
}

export interface NetnsCluster {
  readonly netns: TestNetns;
  readonly cluster: LocalCluster;
  /** A temporary directory of the test's own, removed by dispose(). */
  readonly dir: string;
  /** A GET on the API server with the token of `kubeconfig` (the admin's by default). */
  api(path: string, kubeconfig?: string): Promise<{ status: number; body: string }>;
  /** Writes `node`'s kubeconfig aimed at the API server's address on the veth pair to `path`. */
  writeNodeKubeconfig(node: string, path: string): Promise<void>;
  dispose(): Promise<void>;
}

/** A network namespace and a local control plane with `nodes`' credentials, reachable from it. */
export async function startNetnsCluster(nodes: readonly string[], dirPrefix: string): Promise<NetnsCluster> {
  const netns = await createTestNetns();
  let cluster: LocalCluster | undefined;
  try {
    cluster = await startLocalCluster({ nodes: [...nodes], extraAddresses: [netns.hostIP] });
    const ca = await readFile(cluster.caFile, 'utf8');
    const dir = await mkdtemp(join(tmpdir(), dirPrefix));
    const c = cluster;
    return {
      netns,
      cluster: c,
      dir,
      api: (path, kubeconfig = c.adminKubeconfig) => httpsGet(`${c.server}${path}`, { token: kubeConfigFromFile(kubeconfig).getCurrentUser()!.token!, ca }),
      async writeNodeKubeconfig(node, path) {
        const original = await readFile(c.nodeKubeconfigs[node]!, 'utf8');
        await writeFile(path, original.replace(c.server, `https://${netns.hostIP}:${c.securePort}`));
      },
      async dispose() {
        await c.dispose();
        await netns.remove();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await cluster?.dispose();
    await netns.remove();
    throw err;
  }
}

/**
 * `kubelet-pods run` as `node` in the namespace, on its address, with the API server's client
 * certificate checked against the cluster CA (what the node proxy presents), serving the static
 * pods of `manifestPath`; resolves once `waitForPod` (default/<name>) is Running.
 */
export async function startNodeAgent(env: NetnsCluster, options: { node: string; manifestPath: string; waitForPod: string; extraArgs?: readonly string[] }): Promise<NetnsCommand> {
  const kubeconfig = join(env.dir, `${options.node}.kubeconfig`);
  await env.writeNodeKubeconfig(options.node, kubeconfig);
  const config = join(env.dir, `${options.node}-config.json`);
  await writeFile(config, JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', authentication: { x509: { clientCAFile: env.cluster.caFile } } }));
  const agent = runInNetns(env.netns, ['run', '--kubeconfig', kubeconfig, '--hostname-override', options.node, '--config', config, '--pod-manifest-path', options.manifestPath,
    '--node-ip', env.netns.nsIP, '--address', env.netns.nsIP, '--healthz-port', '0', ...(options.extraArgs ?? [])]);
  try {
    await waitForRunningPod((path) => env.api(path), 'default', options.waitForPod, agent);
  } catch (err) {
    await agent.stop();
    throw err;
  }
  return agent;
}
