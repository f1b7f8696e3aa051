// Shared by the consumer tests (test/integration/consumers-*.test.ts): the cluster's own
// controllers (kube-scheduler, kube-controller-manager) and kubectl judge our nodes and their
// mirror pods. Pods and static pod manifests with CPU requests, the agent and the fleet as
// users run them, waiting for API objects, and kubectl with its exit code and stderr.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { CoreV1Api, V1Node, V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';

import { createFleet, type Fleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { startAgentProcess, type AgentProcess, type AgentProcessOptions } from './agent-process.js';
import { waitFor } from './wait.js';

export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
export const PAUSE = 'registry.k8s.io/pause:3.10';

export const isMirror = (pod: V1Pod): boolean => pod.metadata?.annotations?.[MIRROR_ANNOTATION] !== undefined;

/** The status of the pod's condition `type` ("True", "False", …), or undefined. */
export const podCondition = (pod: V1Pod | undefined, type: string): string | undefined =>
  pod?.status?.conditions?.find((c) => c.type === type)?.status;

export const podReady = (pod: V1Pod | undefined): boolean => podCondition(pod, 'Ready') === 'True';

export const nodeCondition = (node: V1Node | undefined, type: string): string | undefined =>
  node?.status?.conditions?.find((c) => c.type === type)?.status;

export const notFound = (err: unknown): boolean => (err as { code?: number }).code === 404;

/** The result of `read`, or undefined when the API server answers 404. */
export async function readOrUndefined<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (notFound(err)) return undefined;
    throw err;
  }
}

/** Waits until `read` answers 404 (the object is gone). */
export async function waitGone(read: () => Promise<unknown>, what: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(async () => (await readOrUndefined(read)) === undefined, `${what} to be gone`, { timeoutMs, intervalMs: 250 });
}

/** The CPU the agent of `run` reports for this machine (its cores), in millicores. */
export function machineMillicores(): number {
  return Math.max(1, cpus().length) * 1000;
}

/** What a static pod or an ordinary pod may add to the one container `main` of the pause image. */
export interface PodShape {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** The container's CPU request, e.g. "1600m". */
  cpu?: string;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
}

function podSpec(shape: PodShape): NonNullable<V1Pod['spec']> {
  return {
    ...(shape.restartPolicy !== undefined ? { restartPolicy: shape.restartPolicy } : {}),
    ...(shape.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: shape.terminationGracePeriodSeconds } : {}),
    containers: [{ name: 'main', image: PAUSE, ...(shape.cpu !== undefined ? { resources: { requests: { cpu: shape.cpu } } } : {}) }],
  };
}

/** A static pod manifest (YAML). */
export function staticPodYaml(name: string, namespace: string, shape: PodShape = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: name, ...shape.labels }, ...(shape.annotations ? { annotations: shape.annotations } : {}) },
    spec: podSpec(shape),
  });
}

/**
 * An ordinary pod for the scheduler to place: no `spec.nodeName`, only a node selector on the
 * hostname label when `node` is given (so that it can only go to that node).
 */
export function ordinaryPod(name: string, node: string | undefined, shape: PodShape = {}): V1Pod {
  return {
    metadata: { name, labels: { app: name, ...shape.labels }, ...(shape.annotations ? { annotations: shape.annotations } : {}) },
    spec: { ...podSpec(shape), ...(node !== undefined ? { nodeSelector: { [HOSTNAME_LABEL]: node } } : {}) },
  };
}

/** The pod template of a workload (Deployment, DaemonSet, Job), labelled `app: <app>`. */
export function podTemplate(app: string, node: string | undefined, shape: PodShape = {}): { metadata: V1Pod['metadata']; spec: NonNullable<V1Pod['spec']> } {
  const pod = ordinaryPod(app, node, shape);
  return { metadata: { labels: pod.metadata!.labels!, ...(shape.annotations ? { annotations: shape.annotations } : {}) }, spec: pod.spec! };
}

/** Writes a file as an editor would (a temporary name, then a rename). */
export async function writeManifest(dir: string, file: string, text: string): Promise<void> {
  await writeFile(join(dir, `.${file}.tmp`), text);
  await rename(join(dir, `.${file}.tmp`), join(dir, file));
}

/** Temporary directories of a test file, removed by `removeAll` (call it in `after`). */
export class TempDirs {
  readonly #dirs: string[] = [];
  async make(prefix: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    this.#dirs.push(dir);
    return dir;
  }
  async removeAll(): Promise<void> {
    await Promise.all(this.#dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** A `KubeletConfiguration` file with `fields`, written in `dir`; returns its path. */
export async function writeKubeletConfig(dir: string, fields: Record<string, unknown>): Promise<string> {
  const path = join(dir, 'kubelet-config.yaml');
  await writeFile(path, stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...fields }));
  return path;
}

/** Agent processes (`kubelet-pods run`) and in-process fleets of a test file, stopped by `stopAll`. */
export class Nodes {
  readonly #agents: AgentProcess[] = [];
  readonly #fleets: Fleet[] = [];

  agent(options: AgentProcessOptions): AgentProcess {
    const agent = startAgentProcess(options);
    this.#agents.push(agent);
    return agent;
  }

  /** A fleet (docs/fleet.md) from a fleet file's content, started. */
  async fleet(raw: unknown): Promise<Fleet> {
    const fleet = await createFleet({ config: resolveFleetConfig(raw, {}), readOnlyPort: 0, shutdownTimeoutMs: 2000 });
    this.#fleets.push(fleet);
    await fleet.start();
    return fleet;
  }

  /** Stops one fleet now (it is then no longer stopped by `stopAll`). */
  async stopFleet(fleet: Fleet): Promise<void> {
    const i = this.#fleets.indexOf(fleet);
    if (i >= 0) this.#fleets.splice(i, 1);
    await fleet.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#agents.map((a) => a.stop()), ...this.#fleets.map((f) => f.stop())]);
  }
}

/** Waits for the Node `name` to be Ready, and returns it. */
export async function waitNodeReady(api: CoreV1Api, name: string, timeoutMs = 60_000): Promise<V1Node> {
  return waitFor(
    async () => {
      const node = await readOrUndefined(() => api.readNode({ name }));
      return nodeCondition(node, 'Ready') === 'True' ? node : undefined;
    },
    `Node ${name} Ready`,
    { timeoutMs, intervalMs: 250 },
  );
}

/**
 * Waits for the Node `name` to be Ready and free of the `not-ready` taint (which the node
 * lifecycle controller takes off once it saw the node Ready): the scheduler places pods that
 * do not tolerate it only then.
 */
export async function waitNodeSchedulable(api: CoreV1Api, name: string, timeoutMs = 90_000): Promise<V1Node> {
  return waitFor(
    async () => {
      const node = await readOrUndefined(() => api.readNode({ name }));
      const ready = nodeCondition(node, 'Ready') === 'True';
      const tainted = (node?.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/'));
      return ready && !tainted ? node : undefined;
    },
    `Node ${name} Ready without node.kubernetes.io taints`,
    { timeoutMs, intervalMs: 250 },
  );
}

/** Pods bound to `node` (all namespaces), as the admin reads them. */
export async function podsOn(api: CoreV1Api, node: string): Promise<V1Pod[]> {
  return (await api.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
}

/** "name phase ready=…" of each pod, for failure messages. */
export function describePods(pods: readonly V1Pod[]): string {
  return pods
    .map((p) => `${p.metadata?.namespace}/${p.metadata?.name} on ${p.spec?.nodeName ?? '-'} ${p.status?.phase}${p.metadata?.deletionTimestamp ? ' (terminating)' : ''} ready=${podCondition(p, 'Ready') ?? '-'}`)
    .join('; ');
}

/** The reasons and messages of the Events about one object, as one string per Event. */
export async function eventsAbout(api: CoreV1Api, namespace: string, name: string): Promise<string[]> {
  const list = await api.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((e) => `${e.reason}: ${e.message ?? ''}`);
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The real kubectl with its exit code, stdout and stderr (test/helpers/kubectl.ts gives stdout
 * only and allows 30 s); `timeoutMs` bounds the process (a drain takes longer).
 */
export function kubectlRun(kubeconfig: string, args: readonly string[], timeoutMs: number): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new Error('this test runs the real kubectl, which is not on PATH: install kubectl (any version from v1.28 on)', { cause: err }));
        return;
      }
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A manifest directory `<root>/manifests` in a new temporary directory. */
export async function manifestDir(temp: TempDirs, prefix: string): Promise<{ root: string; dir: string }> {
  const root = await temp.make(prefix);
  const dir = join(root, 'manifests');
  await mkdir(dir);
  return { root, dir };
}
