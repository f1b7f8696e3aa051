// Differential test of behaviour over time: the same scenarios (a manifest appears, a user
// deletes the mirror, the manifest is edited or removed, the agent restarts, bad and duplicate
// manifests) are played on the real kubelet (node real-e1) and on our agent (node ours-e1),
// each with its own manifest directory on one control plane, at the same moment. A recorder
// watches both nodes' mirrors, Node, Lease and Events as the admin; a recording proxy in front
// of the API server, one per node, sees each node's own requests (what a DELETE asked for,
// requests the server refused). Each scenario's steps per object are compared after
// normalisation (event-sequence.ts); every difference left must be an `events` row of
// docs/kubelet-differences.md. The timings of each step are printed; where a scenario names a
// step (Scenario.timing: the mirror recreated after a user's delete, removals, edits, an ordinary
// pod's deletion, a Deployment scaled to zero, a mirror the garbage collector deleted), ours
// must take it inside the window the kubelet's relists and housekeeping bound, and the kubelet
// within a stated tolerance of ours and inside that window too, or the run has a `timing`
// difference, which must be a listed row like any other. DIFF_SCENARIOS=a,b runs only the
// scenarios named.
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { stringify } from 'yaml';

import { startHollowKubelet, type HollowKubelet } from '../helpers/hollow-kubelet.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { kubeConfigFromFile, useControlPlane, waitForDefaultServiceAccount } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { startClusterProxy, type RecordedRequest, type RecordingProxy } from './api-proxy.js';
import { describeDifference, parseListedDifferences, patternRegExp, reconcile, type Difference, type Json } from './compare.js';
import { EventRecorder } from './event-recorder.js';
import { freePort, readPods } from '../helpers/node-endpoints.js';
import {
  clusterDNSWarnings,
  eventContext,
  eventDetails,
  eventReasons,
  formatMs,
  leaseSteps,
  nodeSteps,
  outsideWindow,
  podSteps,
  reaction,
  realTimingOff,
  refusedRequests,
  requestCounts,
  requestsAboutPod,
  settledSteps,
  windowSteps,
  type ApiObject,
  type Step,
} from './event-sequence.js';

const REAL = 'real-e1';
const OURS = 'ours-e1';
const NAMESPACE = 'diff-events';
/** Both sides re-read their manifest directory this often (besides file events). */
const FILE_CHECK_MS = 1000;
const SCENARIO_TIMEOUT_MS = 60_000;
/** For a scenario the kubelet may end only at a static pod's periodic sync (1 min, up to 0.5 jitter). */
const PERIODIC_SYNC_TIMEOUT_MS = 150_000;
const DIFFERENCES_DOC = fileURLToPath(new URL('../../../docs/kubelet-differences.md', import.meta.url));

// Registered before useControlPlane's own `after`, so all stop before the cluster.
let recorder: EventRecorder | undefined;
const sides: Side[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  recorder?.stop();
  await Promise.all(sides.map((s) => s.stop()));
  await Promise.all(cleanups.map((c) => c()));
});
const cp = useControlPlane({ nodes: [REAL, OURS] });

/** One node under test: its manifest directory, its proxy, and how to restart it. */
interface Side {
  readonly label: 'real' | 'ours';
  readonly node: string;
  readonly dir: string;
  readonly proxy: RecordingProxy;
  /** The static pods it holds now (its /pods), by name. */
  staticPods(): Promise<Map<string, ApiObject>>;
  restart(): Promise<void>;
  stop(): Promise<void>;
  logs(): Promise<string>;
}

async function startProxy(node: string): Promise<{ proxy: RecordingProxy; kubeconfig: string; dir: string }> {
  const proxy = await startClusterProxy(cp.cluster);
  const dir = await mkdtemp(join(tmpdir(), `kp-events-${node}-`));
  const kubeconfig = join(dir, 'kubeconfig');
  await proxy.writeKubeconfig(cp.cluster.nodeKubeconfigs[node]!, kubeconfig);
  cleanups.push(async () => {
    await proxy.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { proxy, kubeconfig, dir };
}

async function startRealSide(): Promise<Side> {
  const { proxy, kubeconfig, dir } = await startProxy(REAL);
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  const kubelet: HollowKubelet = await startHollowKubelet({ kubeconfig, nodeName: REAL, staticPodPath: manifests, fileCheckFrequencyMs: FILE_CHECK_MS });
  return {
    label: 'real',
    node: REAL,
    dir: manifests,
    proxy,
    staticPods: () => readPods(kubelet.ports.readOnly),
    restart: () => kubelet.restart(),
    stop: () => kubelet.stop(),
    logs: () => kubelet.logs(),
  };
}

async function startOurSide(): Promise<Side> {
  const { proxy, kubeconfig, dir } = await startProxy(OURS);
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', fileCheckFrequency: `${FILE_CHECK_MS}ms` }),
  );
  const readOnlyPort = await freePort();
  const start = (): AgentProcess =>
    startAgentProcess({ nodeName: OURS, kubeconfig, manifestDir: manifests, extraArgs: ['--config', config, '--read-only-port', String(readOnlyPort)] });
  let agent = start();
  let earlierLogs = '';
  const answering = (): Promise<void> =>
    waitFor(() => readPods(readOnlyPort).then(() => true, () => false), 'our agent answering /pods', { timeoutMs: 20_000, intervalMs: 100 }).then(() => {});
  await answering();
  return {
    label: 'ours',
    node: OURS,
    dir: manifests,
    proxy,
    staticPods: () => readPods(readOnlyPort),
    async restart() {
      await agent.stop();
      earlierLogs += agent.logs();
      agent = start();
      await answering();
    },
    stop: () => agent.stop(),
    logs: async () => earlierLogs + agent.logs(),
  };
}

// ---------------------------------------------------------------------------------------------
// Manifests: short grace periods so that the kubelet's terminations stay short.

interface PodOptions {
  image?: string;
  grace?: number;
  extra?: Record<string, unknown>;
}

function podManifest(name: string, o: PodOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { scenario: name } },
    spec: {
      terminationGracePeriodSeconds: o.grace ?? 1,
      containers: [{ name: 'main', image: o.image ?? 'registry.k8s.io/pause:3.10' }],
      ...o.extra,
    },
  };
}

/** Writes a file the way an editor or config tool should: complete, then renamed into place. */
async function writeManifest(side: Side, file: string, content: string | Record<string, unknown>): Promise<void> {
  const text = typeof content === 'string' ? content : stringify(content);
  const tmp = join(side.dir, `.${file}.tmp`);
  await writeFile(tmp, text);
  await rename(tmp, join(side.dir, file));
}

// ---------------------------------------------------------------------------------------------
// What a side has now, from the recorder.

function mirrorName(side: Side, pod: string): string {
  return `${pod}-${side.node}`;
}

/** The mirror's latest state, or undefined if it does not exist (never did, or was deleted). */
function currentMirror(side: Side, pod: string): ApiObject | undefined {
  const records = recorder!.about('pod', mirrorName(side, pod), NAMESPACE);
  const last = records[records.length - 1];
  return last === undefined || last.type === 'DELETED' ? undefined : last.object;
}

/** Running, every container ready, not being deleted. */
function isRunning(pod: ApiObject | undefined): boolean {
  if (pod === undefined || (pod.metadata?.deletionTimestamp ?? null) !== null) return false;
  const status = pod.status as { phase?: string; containerStatuses?: Array<{ ready?: boolean }> } | undefined;
  return status?.phase === 'Running' && (status.containerStatuses ?? []).length > 0 && status.containerStatuses!.every((c) => c.ready === true);
}

function imageOf(pod: ApiObject | undefined): string | undefined {
  return (pod?.spec as { containers?: Array<{ image?: string }> } | undefined)?.containers?.[0]?.image;
}

function hashOf(pod: ApiObject | undefined): string | undefined {
  return pod?.metadata?.annotations?.['kubernetes.io/config.hash'];
}

/** The side holds the static pod `pod`, and its mirror is Running with the same hash. */
async function converged(side: Side, pod: string): Promise<boolean> {
  const held = (await side.staticPods().catch(() => new Map<string, ApiObject>())).get(mirrorName(side, pod));
  const mirror = currentMirror(side, pod);
  return held !== undefined && isRunning(mirror) && hashOf(mirror) === hashOf(held);
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

interface Scenario {
  name: string;
  /** The pods (names without the node suffix) whose steps are compared. */
  pods: string[];
  /** The API name of `pod` on the side, when it is not `<pod>-<node>` (a controller's pod). */
  podName?(side: Side, pod: string): string;
  /** Compare the Node's and the Lease's steps too. */
  nodeAndLease?: boolean;
  /**
   * Compare how soon each node reacts (see `reaction`): for scenarios whose action reaches
   * both nodes the same way, not for a restart, where our process takes longer to start.
   */
  timed?: boolean;
  /** For `timed`: the first step counts as at once below this (default AT_ONCE_MS). */
  atOnceMs?: number;
  /**
   * Compare when the step matching `step` happens on both nodes (ms after the action): they
   * must be within `toleranceMs` of each other. For the kubelet lifecycle's own timings
   * (termination, the start retry, housekeeping), with a tolerance that covers what varies from
   * run to run on either side (the start retry's 0–5 s jitter, the 2 s housekeeping phase, the
   * 1 s relist phase). `withinMs`: the window the kubelet's relists and housekeeping leave for
   * the step (docs/kubelet-differences.md); ours must take it inside (asserted), and the
   * kubelet outside it or beyond the tolerance is a `timing` difference (listed, as the
   * kubelet's own races can put it there). `from`: measure from this step of the same side
   * instead of the action (a controller's delete, whose own delay is the controller's, not the
   * node's).
   */
  timing?: { step: RegExp; from?: RegExp; toleranceMs: number; withinMs?: readonly [number, number] };
  /** Before the window: bring the side to the starting state. */
  setup?(side: Side): Promise<void>;
  /** Resolves true once the starting state is reached. */
  ready?(side: Side): Promise<boolean> | boolean;
  /** The action whose effects are compared. */
  act(side: Side): Promise<void>;
  /** Resolves true once the side has finished reacting. */
  done(side: Side): Promise<boolean> | boolean;
  /** How long `done` may take (default SCENARIO_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Creates an ordinary pod named like a mirror (`<pod>-<node>`) bound to the side's node, as a user would. */
async function createApiPod(side: Side, pod: string): Promise<void> {
  const body = podManifest(pod, { grace: 2 });
  const metadata = body['metadata'] as Record<string, unknown>;
  await cp.adminApi.createNamespacedPod({
    namespace: NAMESPACE,
    // No service account token volume: nothing here serves the ConfigMap it projects, and the
    // kubelet would wait for it forever.
    body: {
      ...body,
      metadata: { ...metadata, name: mirrorName(side, pod) },
      spec: { ...(body['spec'] as object), nodeName: side.node, automountServiceAccountToken: false },
    } as never,
  });
}

/** Per node, the UID of the mirror before scenario re-add. */
const readdMirrorUID = new Map<string, string | undefined>();
/** Per node, when scenario re-add-fixed-uid acted. */
const readdStart = new Map<string, number>();
/** How long re-add-fixed-uid watches after its action (termination, restart, status). */
const READD_SETTLE_MS = 8000;

/**
 * The manifest of re-add-fixed-uid: grace 5 s and a fixed UID, one per node. Its container
 * takes 1 s to stop on our side (the simulation's stop time; the kubelet ignores the
 * annotation), so that the pod is still stopping on both sides when the manifest comes back:
 * the kubelet's own stop takes its 1 s PLEG relist at least.
 */
function fixedUidManifest(side: Side): Record<string, unknown> {
  const m = podManifest('re-add-uid', { grace: 5 });
  const suffix = side.label === 'real' ? '0001' : '0002';
  const metadata = m['metadata'] as Record<string, unknown>;
  return { ...m, metadata: { ...metadata, uid: `5e1f0000-0000-4000-8000-00000000${suffix}`, annotations: { 'simulation.kubelet-pods.io/stop-seconds': '1' } } };
}

/**
 * The manifest of remove-grace-default: no terminationGracePeriodSeconds (30 s once defaulted)
 * and a preStop sleep hook of the whole grace period (validation allows no longer), which the
 * kubelet runs itself: the hollow kubelet's fake runtime stops containers at once, but the hook
 * delays the stop by 30 s; then SIGTERM gets the 2 s floor.
 */
function defaultGraceManifest(): Record<string, unknown> {
  const m = podManifest('remove-gdef');
  const spec = { ...(m['spec'] as Record<string, unknown>) };
  delete spec['terminationGracePeriodSeconds'];
  spec['containers'] = [{ name: 'main', image: 'registry.k8s.io/pause:3.10', lifecycle: { preStop: { sleep: { seconds: 30 } } } }];
  return { ...m, spec };
}

/** Per node, the UID of the mirror the user deletes in scenario user-delete. */
const deletedUID = new Map<string, string | undefined>();

let appsApi: AppsV1Api | undefined;
const apps = (): AppsV1Api => (appsApi ??= kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(AppsV1Api));
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The Deployment of scenario scale-to-zero on a side: one replica, pinned to the side's node. */
const scaleDeployment = (side: Side): string => `scale-zero-${side.node}`;
/** Per node, the name of that Deployment's pod once it runs (the ReplicaSet names it). */
const scalePod = new Map<string, string>();

async function createScaleDeployment(side: Side): Promise<void> {
  const name = scaleDeployment(side);
  const pod = podManifest(name, { grace: 2 });
  await apps().createNamespacedDeployment({
    namespace: NAMESPACE,
    body: {
      metadata: { name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { scenario: name } },
        template: {
          metadata: { labels: { scenario: name } },
          // No service account token: see createApiPod.
          spec: { ...(pod['spec'] as object), nodeSelector: { 'kubernetes.io/hostname': side.node }, automountServiceAccountToken: false } as never,
        },
      },
    },
  });
}

/** The name of the Deployment's pod on the side once it is Running (and remembers it), else undefined. */
function runningScalePod(side: Side): string | undefined {
  const latest = new Map<string, { type: string; object: ApiObject }>();
  for (const r of recorder!.records) {
    if (r.kind === 'pod' && r.object.metadata?.namespace === NAMESPACE && r.object.metadata.labels?.['scenario'] === scaleDeployment(side)) {
      latest.set(r.object.metadata.name ?? '', r);
    }
  }
  const running = [...latest].filter(([, r]) => r.type !== 'DELETED' && isRunning(r.object)).map(([name]) => name);
  if (running.length !== 1) return undefined;
  scalePod.set(side.node, running[0]!);
  return running[0];
}

/** How long scenario gc-mirror watches after the mirror is gone, for a create that must not come. */
const GC_QUIET_MS = 3000;
/** Per node, the UID of the mirror before scenario gc-mirror-node-back. */
const gcBackUID = new Map<string, string | undefined>();
/** Per node, the labels of the Node scenario gc-mirror deletes, for gc-mirror-node-created. */
const gcNodeLabels = new Map<string, Record<string, string> | undefined>();
/** The side's Node exists, with allocatable pods and Ready as the node wrote them. */
function nodeStatusWritten(side: Side): boolean {
  const last = recorder!.about('node', side.node).at(-1);
  if (last === undefined || last.type === 'DELETED') return false;
  const status = last.object.status as { allocatable?: Record<string, string>; conditions?: Array<{ type?: string; status?: string }> } | undefined;
  return status?.allocatable?.['pods'] !== undefined && status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** Per node, when the mirror of scenario gc-mirror was seen gone. */
const gcMirrorGone = new Map<string, number>();

const SCENARIOS: Scenario[] = [
  {
    name: 'appear',
    timed: true,
    pods: ['appear'],
    act: (side) => writeManifest(side, 'appear.yaml', podManifest('appear')),
    done: (side) => converged(side, 'appear'),
  },
  {
    // Not `timed`: each node deletes and recreates the mirror at a relist of its own (the pod
    // worker's next sync, up to two relists away), on either side of AT_ONCE_MS; the new
    // mirror's creation is compared instead.
    name: 'user-delete',
    pods: ['user-delete'],
    timing: { step: /^created #2 /, toleranceMs: 2500, withinMs: [0, 2500] },
    setup: (side) => writeManifest(side, 'user-delete.yaml', podManifest('user-delete', { grace: 2 })),
    ready: (side) => converged(side, 'user-delete'),
    async act(side) {
      // As `kubectl delete pod` does: no grace period (the pod's own applies), background.
      deletedUID.set(side.node, currentMirror(side, 'user-delete')?.metadata?.uid);
      await cp.adminApi.deleteNamespacedPod({ name: mirrorName(side, 'user-delete'), namespace: NAMESPACE, propagationPolicy: 'Background' });
    },
    done: async (side) => (await converged(side, 'user-delete')) && currentMirror(side, 'user-delete')?.metadata?.uid !== deletedUID.get(side.node),
  },
  {
    name: 'edit',
    timed: true,
    pods: ['edit'],
    setup: (side) => writeManifest(side, 'edit.yaml', podManifest('edit', { image: 'registry.k8s.io/pause:3.9', grace: 2 })),
    ready: (side) => converged(side, 'edit'),
    act: (side) => writeManifest(side, 'edit.yaml', podManifest('edit', { image: 'registry.k8s.io/pause:3.10', grace: 2 })),
    done: async (side) => (await converged(side, 'edit')) && imageOf(currentMirror(side, 'edit')) === 'registry.k8s.io/pause:3.10',
  },
  {
    // Not `timed` (nor remove-grace-1 and -5, re-add): the first step, the final status, comes
    // at the pod worker's termination step, a relist of each node's own; the deletion is
    // compared instead.
    name: 'remove',
    pods: ['remove'],
    timing: { step: /^deleted /, toleranceMs: 4000, withinMs: [0, 4500] },
    setup: (side) => writeManifest(side, 'remove.yaml', podManifest('remove', { grace: 2 })),
    ready: (side) => converged(side, 'remove'),
    act: (side) => unlink(join(side.dir, 'remove.yaml')),
    done: (side) => recorder!.about('pod', mirrorName(side, 'remove'), NAMESPACE).at(-1)?.type === 'DELETED',
  },
  ...[1, 5].map(
    (grace): Scenario => ({
      name: `remove-grace-${grace}`,
      pods: [`remove-g${grace}`],
      timing: { step: /^deleted /, toleranceMs: 4000, withinMs: [0, 4500] },
      setup: (side) => writeManifest(side, `remove-g${grace}.yaml`, podManifest(`remove-g${grace}`, { grace })),
      ready: (side) => converged(side, `remove-g${grace}`),
      act: (side) => unlink(join(side.dir, `remove-g${grace}.yaml`)),
      done: (side) => recorder!.about('pod', mirrorName(side, `remove-g${grace}`), NAMESPACE).at(-1)?.type === 'DELETED',
    }),
  ),
  {
    // The default grace period: the pod stops after 30 s on both sides (its preStop hook cut at
    // the grace period), then the mirror is deleted.
    name: 'remove-grace-default',
    timed: true,
    pods: ['remove-gdef'],
    timing: { step: /^deleted /, toleranceMs: 4000, withinMs: [30_000, 34_500] },
    setup: (side) => writeManifest(side, 'remove-gdef.yaml', defaultGraceManifest()),
    ready: (side) => converged(side, 'remove-gdef'),
    act: (side) => unlink(join(side.dir, 'remove-gdef.yaml')),
    done: (side) => recorder!.about('pod', mirrorName(side, 'remove-gdef'), NAMESPACE).at(-1)?.type === 'DELETED',
  },
  ...[1, 5].map(
    (grace): Scenario => ({
      name: `edit-grace-${grace}`,
      timed: true,
      pods: [`edit-g${grace}`],
      timing: { step: /^created #2 /, toleranceMs: 6000 },
      setup: (side) => writeManifest(side, `edit-g${grace}.yaml`, podManifest(`edit-g${grace}`, { image: 'registry.k8s.io/pause:3.9', grace })),
      ready: (side) => converged(side, `edit-g${grace}`),
      act: (side) => writeManifest(side, `edit-g${grace}.yaml`, podManifest(`edit-g${grace}`, { image: 'registry.k8s.io/pause:3.10', grace })),
      done: async (side) => (await converged(side, `edit-g${grace}`)) && imageOf(currentMirror(side, `edit-g${grace}`)) === 'registry.k8s.io/pause:3.10',
    }),
  ),
  {
    // Remove, then once the mirror is gone write the identical manifest again: the same static
    // pod UID comes back, the node creates a new mirror and runs the pod again.
    name: 're-add',
    pods: ['re-add'],
    timing: { step: /^deleted /, toleranceMs: 4000, withinMs: [0, 4500] },
    setup: (side) => writeManifest(side, 're-add.yaml', podManifest('re-add', { grace: 2 })),
    ready: (side) => converged(side, 're-add'),
    async act(side) {
      readdMirrorUID.set(side.node, currentMirror(side, 're-add')?.metadata?.uid);
      await unlink(join(side.dir, 're-add.yaml'));
      await waitFor(() => currentMirror(side, 're-add') === undefined, `re-add: mirror gone on ${side.node}`, { timeoutMs: SCENARIO_TIMEOUT_MS, intervalMs: 50 });
      await writeManifest(side, 're-add.yaml', podManifest('re-add', { grace: 2 }));
    },
    done: async (side) => (await converged(side, 're-add')) && currentMirror(side, 're-add')?.metadata?.uid !== readdMirrorUID.get(side.node),
  },
  {
    // A manifest with a fixed metadata.uid is removed and written again 0.3 s later, while its
    // pod is still terminating: the create for a UID still terminating is a restart, the pod
    // runs again once it has stopped.
    name: 're-add-fixed-uid',
    pods: ['re-add-uid'],
    setup: (side) => writeManifest(side, 're-add-uid.yaml', fixedUidManifest(side)),
    ready: (side) => converged(side, 're-add-uid'),
    async act(side) {
      readdStart.set(side.node, performance.now());
      await unlink(join(side.dir, 're-add-uid.yaml'));
      await new Promise((r) => setTimeout(r, 300));
      await writeManifest(side, 're-add-uid.yaml', fixedUidManifest(side));
    },
    // Long enough for the termination and the restart on both sides, then settled again.
    done: async (side) => performance.now() - (readdStart.get(side.node) ?? 0) > READD_SETTLE_MS && (await converged(side, 're-add-uid')),
  },
  {
    // An ordinary pod that a user binds to the node (no scheduler runs here): both nodes run it.
    name: 'api-pod-create',
    timed: true,
    pods: ['api-create'],
    act: (side) => createApiPod(side, 'api-create'),
    done: (side) => isRunning(currentMirror(side, 'api-create')),
  },
  {
    // `kubectl delete pod` of a running ordinary pod: the node terminates it with the
    // deletion's grace period, writes its final status and deletes it for good.
    name: 'api-pod-delete',
    // Not `timed`: each node's first step (the final status) comes at its termination step, a
    // relist of its own, on either side of AT_ONCE_MS; the deletion's time is compared instead.
    timing: { step: /^deleted /, toleranceMs: 2500, withinMs: [0, 2500] },
    pods: ['api-delete'],
    setup: (side) => createApiPod(side, 'api-delete'),
    ready: (side) => isRunning(currentMirror(side, 'api-delete')),
    act: async (side) => {
      await cp.adminApi.deleteNamespacedPod({ name: mirrorName(side, 'api-delete'), namespace: NAMESPACE });
    },
    done: (side) => recorder!.about('pod', mirrorName(side, 'api-delete'), NAMESPACE).at(-1)?.type === 'DELETED',
  },
  {
    // A Deployment of one replica pinned to the node is scaled to 0: the ReplicaSet controller
    // deletes the pod (its grace period), the node terminates it and deletes it for good.
    name: 'scale-to-zero',
    // Not `timed`, as api-pod-delete: the pod's deletion, from the scale, is compared.
    timing: { step: /^deleted /, toleranceMs: 2500, withinMs: [0, 3000] },
    pods: ['scale-zero'],
    podName: (side) => scalePod.get(side.node) ?? `(no pod of ${scaleDeployment(side)})`,
    setup: (side) => createScaleDeployment(side),
    ready: (side) => runningScalePod(side) !== undefined,
    act: async (side) => {
      await apps().patchNamespacedDeployment({ namespace: NAMESPACE, name: scaleDeployment(side), body: { spec: { replicas: 0 } } }, mergePatch);
    },
    done: (side) => recorder!.about('pod', scalePod.get(side.node) ?? '', NAMESPACE).at(-1)?.type === 'DELETED',
  },
  {
    name: 'restart',
    pods: ['restart', 'restart-canary'],
    nodeAndLease: true,
    setup: (side) => writeManifest(side, 'restart.yaml', podManifest('restart')),
    ready: (side) => converged(side, 'restart'),
    async act(side) {
      await side.restart();
      // Once the restarted side has mirrored a new manifest, it has looked at the old one too.
      await writeManifest(side, 'restart-canary.yaml', podManifest('restart-canary'));
    },
    done: async (side) => (await converged(side, 'restart-canary')) && (await converged(side, 'restart')),
  },
  {
    name: 'bad-manifests',
    timed: true,
    pods: ['bad-good-a', 'bad-good-b', 'bad-invalid', 'bad-secret'],
    async act(side) {
      await writeManifest(side, 'bad-good-a.yaml', podManifest('bad-good-a'));
      await writeManifest(side, 'bad-syntax.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: bad-syntax\n  namespace: [\n');
      // Fails validation: an invalid container name.
      await writeManifest(side, 'bad-invalid.yaml', podManifest('bad-invalid', { extra: { containers: [{ name: 'Not_Valid', image: 'registry.k8s.io/pause:3.10' }] } }));
      // Valid, but references a Secret: the API server refuses a node's mirror of it.
      await writeManifest(
        side,
        'bad-secret.yaml',
        podManifest('bad-secret', { extra: { volumes: [{ name: 'creds', secret: { secretName: 'creds' } }] } }),
      );
      await writeManifest(side, 'bad-good-b.yaml', podManifest('bad-good-b'));
    },
    done: async (side) => (await converged(side, 'bad-good-a')) && (await converged(side, 'bad-good-b')),
  },
  {
    name: 'duplicate',
    timed: true,
    pods: ['dup', 'dup-canary'],
    setup: (side) => writeManifest(side, 'dup.yaml', podManifest('dup', { image: 'registry.k8s.io/pause:3.10' })),
    ready: (side) => converged(side, 'dup'),
    async act(side) {
      // A backup with an older image appears next to the running manifest, then another
      // manifest: once that one is mirrored, the side has read the backup too.
      await writeManifest(side, 'dup.yaml.bak', podManifest('dup', { image: 'registry.k8s.io/pause:3.9' }));
      await writeManifest(side, 'dup-canary.yaml', podManifest('dup-canary'));
    },
    done: async (side) => (await converged(side, 'dup-canary')) && (await converged(side, 'dup')),
  },
  // The last three delete the Nodes: each node's mirrors are owned by its Node, so the garbage
  // collector deletes them. Neither node registers a deleted Node again while it runs, so the
  // last one creates them again.
  {
    // The admin deletes the Node and at once creates it again, so the collector deletes a
    // mirror whose owner (the old Node's UID) is gone while a Node of that name exists: the
    // node deletes the mirror for good at its pod worker's next sync and creates a new one,
    // owned by the new Node.
    name: 'gc-mirror-node-back',
    pods: ['gc-back'],
    // When the kubelet's Node lister is between the two Nodes as the collector's delete
    // arrives, it creates the new mirror only at the static pod's periodic sync (KD-111?).
    timeoutMs: PERIODIC_SYNC_TIMEOUT_MS,
    // From the collector's delete: the same window as user-delete's.
    timing: { step: /^created #2 /, from: /^deletion requested .* by other$/, toleranceMs: 2500, withinMs: [0, 2500] },
    setup: (side) => writeManifest(side, 'gc-back.yaml', podManifest('gc-back', { grace: 2 })),
    ready: (side) => converged(side, 'gc-back'),
    async act(side) {
      gcBackUID.set(side.node, currentMirror(side, 'gc-back')?.metadata?.uid);
      const labels = (await cp.adminApi.readNode({ name: side.node })).metadata?.labels;
      await cp.adminApi.deleteNode({ name: side.node });
      await cp.adminApi.createNode({ body: { metadata: { name: side.node, ...(labels !== undefined ? { labels } : {}) } } });
    },
    // Also until the node has written the new Node's status: before that the kubelet admits no
    // new pod (no allocatable), and gc-mirror's manifest comes next.
    done: async (side) =>
      nodeStatusWritten(side) && (await converged(side, 'gc-back')) && currentMirror(side, 'gc-back')?.metadata?.uid !== gcBackUID.get(side.node),
  },
  {
    // The Node is deleted (`kubectl delete node`) and stays gone: the node deletes the mirror
    // the collector deleted (graceful, with the pod's grace period) for good at its pod worker's
    // next sync and, its Node gone, creates none; the static pod runs on.
    name: 'gc-mirror',
    pods: ['gc-mirror'],
    timing: { step: /^deleted /, from: /^deletion requested .* by other$/, toleranceMs: 2500, withinMs: [0, 2500] },
    setup: (side) => writeManifest(side, 'gc-mirror.yaml', podManifest('gc-mirror', { grace: 2 })),
    ready: (side) => converged(side, 'gc-mirror'),
    act: async (side) => {
      gcNodeLabels.set(side.node, (await cp.adminApi.readNode({ name: side.node })).metadata?.labels);
      await cp.adminApi.deleteNode({ name: side.node });
    },
    // The mirror gone, then GC_QUIET_MS more (a create in that time shows as a step), the
    // static pod still held.
    async done(side) {
      if (!gcMirrorGone.has(side.node) && currentMirror(side, 'gc-mirror') === undefined) gcMirrorGone.set(side.node, performance.now());
      const gone = gcMirrorGone.get(side.node);
      if (gone === undefined || performance.now() - gone < GC_QUIET_MS) return false;
      return (await side.staticPods().catch(() => new Map<string, ApiObject>())).has(mirrorName(side, 'gc-mirror'));
    },
  },
  {
    // After gc-mirror: the admin creates the Node again (with the old one's labels). The node
    // takes it; the mirror comes back, owned by the new Node: ours at once (it reconciles every
    // mirror when its Node appears), the kubelet at the static pod's next periodic sync (1 min
    // with up to 0.5 jitter after the last one; it has no such pass after its start).
    name: 'gc-mirror-node-created',
    timed: true,
    // At once (ours, under a second) or at a periodic sync (the kubelet, 55 s on): far apart,
    // so that load on the machine does not move either across.
    atOnceMs: 10_000,
    pods: ['gc-mirror'],
    timeoutMs: PERIODIC_SYNC_TIMEOUT_MS,
    act: async (side) => {
      const labels = gcNodeLabels.get(side.node);
      await cp.adminApi.createNode({ body: { metadata: { name: side.node, ...(labels !== undefined ? { labels } : {}) } } });
    },
    done: (side) => converged(side, 'gc-mirror'),
  },
];

/** DIFF_SCENARIOS=a,b: only these scenarios (while developing; a whole run is every scenario). */
const ONLY = process.env['DIFF_SCENARIOS']?.split(',').map((x) => x.trim()).filter((x) => x !== '');
const unknownScenarios = (ONLY ?? []).filter((name) => !SCENARIOS.some((x) => x.name === name));
if (unknownScenarios.length > 0) {
  throw new Error(`DIFF_SCENARIOS names unknown scenarios: ${unknownScenarios.join(', ')} (known: ${SCENARIOS.map((x) => x.name).join(', ')})`);
}
const SELECTED = ONLY === undefined ? SCENARIOS : SCENARIOS.filter((x) => ONLY.includes(x.name));

/** The listed rows this run can check: every row, or with DIFF_SCENARIOS those of the scenarios run. */
function rowsInScope<T extends { pattern: string }>(rows: readonly T[]): T[] {
  if (ONLY === undefined) return [...rows];
  return rows.filter((row) => {
    const scenario = /^events:([^/ ]+)\//.exec(row.pattern)?.[1];
    return scenario === undefined || SELECTED.some((x) => patternRegExp(scenario).test(x.name));
  });
}

interface Window {
  t0: number;
  t1: number;
  /** The end of the window for Events (see eventsSettled). */
  eventsUntil: number;
}

interface ScenarioRun {
  scenario: Scenario;
  windows: Map<Side, Window>;
}

/** A node's Events are settled once none arrived for this long... */
const EVENTS_QUIET_MS = 700;
/** ...or after this long, whatever arrives (the kubelet repeats some Events at every pod sync). */
const EVENTS_SETTLE_MAX_MS = 5000;

/**
 * Waits until the side has written no Event for EVENTS_QUIET_MS: each node writes its Events
 * in the background, one at a time, after the status that ends a step (ours) or before it (the
 * kubelet), so without this a start's `Created` could land in the next window. A restarted
 * node starting all its pods at once has a queue of them to write.
 */
async function eventsSettled(side: Side): Promise<void> {
  const start = performance.now();
  const byNode = (r: { kind: string; object: Record<string, unknown> }): boolean =>
    r.kind === 'event' && ((r.object['source'] as { host?: string } | undefined)?.host === side.node || r.object['reportingInstance'] === side.node);
  for (;;) {
    const now = performance.now();
    const last = recorder!.records.findLast(byNode)?.t ?? 0;
    if (now - Math.max(last, start) >= EVENTS_QUIET_MS || now - start >= EVENTS_SETTLE_MAX_MS) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runScenario(scenario: Scenario): Promise<ScenarioRun> {
  if (scenario.setup !== undefined) {
    await Promise.all(sides.map((s) => scenario.setup!(s)));
    await Promise.all(sides.map((s) => waitFor(() => scenario.ready!(s), `${scenario.name}: starting state on ${s.node}`, { timeoutMs: SCENARIO_TIMEOUT_MS, intervalMs: 100 })));
    await Promise.all(sides.map((s) => eventsSettled(s)));
  }
  const windows = new Map<Side, Window>();
  await Promise.all(
    sides.map(async (s) => {
      const t0 = performance.now();
      await scenario.act(s);
      await waitFor(() => scenario.done(s), `${scenario.name}: end state on ${s.node}`, { timeoutMs: scenario.timeoutMs ?? SCENARIO_TIMEOUT_MS, intervalMs: 100 });
      const end = performance.now();
      await eventsSettled(s);
      // The window's steps end at the end state; its Events include those written just after.
      windows.set(s, { t0, t1: end, eventsUntil: performance.now() });
    }),
  );
  return { scenario, windows };
}

interface SideSteps {
  /** The window's steps, times relative to the action. */
  steps: Step[];
  /** The last step before the window. */
  before: Step | undefined;
  refused: string[];
  requests: string;
  reasons: string[];
  /** The events in the window, described (eventDetails). */
  details: string[];
  /** The node's MissingClusterDNS warnings about the pod up to the window's end. */
  dns: string[];
}

function stepsOf(run: ScenarioRun, side: Side, subject: string): SideSteps {
  const w = run.windows.get(side)!;
  const inWindow = <T extends { t: number }>(xs: readonly T[]): T[] => xs.filter((x) => x.t >= w.t0 && x.t <= w.t1);
  const inEventWindow = <T extends { t: number }>(xs: readonly T[]): T[] => xs.filter((x) => x.t >= w.t0 && x.t <= w.eventsUntil);
  const split = (all: Step[]): Pick<SideSteps, 'steps' | 'before'> => ({ steps: windowSteps(all, w.t0, w.t1), before: all.filter((x) => x.t < w.t0).at(-1) });
  if (subject === 'node' || subject === 'lease') {
    const all = subject === 'node' ? nodeSteps(recorder!.about('node', side.node)) : leaseSteps(recorder!.about('lease', side.node, 'kube-node-lease'));
    return { ...split(all), refused: [], requests: '', reasons: [], details: [], dns: [] };
  }
  const name = run.scenario.podName?.(side, subject) ?? mirrorName(side, subject);
  const requests = requestsAboutPod(side.proxy.requests, NAMESPACE, name);
  const pods = recorder!.about('pod', name, NAMESPACE);
  const events = recorder!.eventsAbout(side.node, NAMESPACE, name);
  const ctx = eventContext(side.node, pods, run.scenario.podName !== undefined ? name : undefined);
  return {
    ...split(podSteps(pods, requests)),
    refused: refusedRequests(inWindow(requests)),
    requests: requestCounts(inWindow(requests)),
    reasons: eventReasons(inEventWindow(events)),
    details: eventDetails(inEventWindow(events), ctx),
    dns: clusterDNSWarnings(events.filter((x) => x.t <= w.eventsUntil), ctx),
  };
}

function compareRun(run: ScenarioRun, t: TestContext): Difference[] {
  const [real, ours] = sides as [Side, Side];
  const subjects = [...run.scenario.pods, ...(run.scenario.nodeAndLease === true ? ['node', 'lease'] : [])];
  const found: Difference[] = [];
  for (const subject of subjects) {
    const r = stepsOf(run, real, subject);
    const o = stepsOf(run, ours, subject);
    t.diagnostic(`${run.scenario.name}/${subject}`);
    for (const [label, x] of [
      ['real', r],
      ['ours', o],
    ] as const) {
      t.diagnostic(`  ${label}: ${x.steps.map((step) => `+${formatMs(step.t)} ${step.text}`).join(' | ') || '(nothing)'}`);
      if (x.requests !== '') t.diagnostic(`  ${label} requests: ${x.requests}`);
      if (x.reasons.length > 0) t.diagnostic(`  ${label} Events: ${x.reasons.join(', ')}`);
      for (const d of x.details) t.diagnostic(`    ${label} event: ${d}`);
    }
    const sequence = (x: SideSteps): string[] => settledSteps(x.steps, x.before).map((step) => step.text);
    const compared: Array<[string, Json | undefined, Json | undefined]> = [
      ['sequence', sequence(r), sequence(o)],
      ['refused-requests', r.refused, o.refused],
      ['event-reasons', r.reasons, o.reasons],
      ['missing-cluster-dns', r.dns, o.dns],
    ];
    // Each event's type, part, reference and message, once the reasons agree (a missing reason
    // is one difference, not two).
    if (JSON.stringify(r.reasons) === JSON.stringify(o.reasons)) compared.push(['event-details', r.details, o.details]);
    if (run.scenario.timed === true) compared.push(['reaction', reaction(r.steps, run.scenario.atOnceMs), reaction(o.steps, run.scenario.atOnceMs)]);
    const timing = run.scenario.timing;
    if (timing !== undefined) {
      const timeOf = (x: SideSteps): number | undefined => {
        const at = x.steps.find((step) => timing.step.test(step.text))?.t;
        const from = timing.from === undefined ? 0 : x.steps.find((step) => timing.from!.test(step.text))?.t;
        return at === undefined || from === undefined ? undefined : at - from;
      };
      const rt = timeOf(r);
      const ot = timeOf(o);
      const delta = rt !== undefined && ot !== undefined ? ot - rt : undefined;
      t.diagnostic(
        `  timing of ${timing.step.source}: real ${rt === undefined ? '(none)' : formatMs(rt)}, ours ${ot === undefined ? '(none)' : formatMs(ot)}` +
          `, difference ${delta === undefined ? '?' : formatMs(Math.abs(delta))} (${delta !== undefined && delta < 0 ? 'ours earlier' : 'ours later'}), tolerance ${formatMs(timing.toleranceMs)}`,
      );
      const origin = timing.from === undefined ? 'the action' : timing.from.source;
      if (timing.from !== undefined) t.diagnostic(`  timing measured from ${origin}`);
      if (timing.withinMs !== undefined) t.diagnostic(`  window of ${timing.step.source}: ${formatMs(timing.withinMs[0])} to ${formatMs(timing.withinMs[1])} after ${origin}`);
      timings.push({ scenario: `${run.scenario.name}/${subject}`, step: timing.step.source, ours: ot, withinMs: timing.withinMs });
      if (realTimingOff(rt, ot, timing.toleranceMs, timing.withinMs)) compared.push(['timing', rt === undefined ? null : formatMs(rt), ot === undefined ? null : formatMs(ot)]);
    }
    for (const [path, rv, ov] of compared) {
      if (JSON.stringify(rv) === JSON.stringify(ov)) continue;
      const difference: Difference = { area: 'events', subject: `${run.scenario.name}/${subject}`, path, real: rv, ours: ov };
      found.push(difference);
      if (path === 'event-reasons') reasonDifferences.set(difference, { run, subject });
    }
  }
  return found;
}

/** Where each Event-reasons difference came from, to say more about it at the end of the suite. */
const reasonDifferences = new Map<Difference, { run: ScenarioRun; subject: string }>();
/** How many of a node's log lines naming the pod explainReasonDifference shows (the last ones). */
const LOG_LINES_PER_DIFFERENCE = 15;

/**
 * For an Event-reasons difference nobody listed: each node's Events about the pod that came
 * after the scenario's window (a late write, such as client-go's retry of a failed one), and
 * the node's log lines naming the pod (client-go logs a write it failed with the Event).
 */
async function explainReasonDifference(d: Difference, t: TestContext): Promise<void> {
  const origin = reasonDifferences.get(d);
  if (origin === undefined) return;
  for (const side of sides) {
    const name = origin.run.scenario.podName?.(side, origin.subject) ?? mirrorName(side, origin.subject);
    const until = origin.run.windows.get(side)!.eventsUntil;
    const late = recorder!.eventsAbout(side.node, NAMESPACE, name).filter((x) => x.t > until);
    const lateText = late.map((x) => `${(x.object as { reason?: string }).reason ?? '?'} +${formatMs(x.t - until)}`).join(', ');
    t.diagnostic(`${d.subject}: ${side.label} Events about ${name} after the window: ${lateText || 'none'}`);
    const lines = (await side.logs()).split('\n').filter((line) => line.includes(name));
    for (const line of lines.slice(-LOG_LINES_PER_DIFFERENCE)) t.diagnostic(`  ${side.label} log: ${line.slice(0, 600)}`);
  }
}

/** Our side's time of each step a scenario names (see Scenario.timing), for its window. */
const timings: Array<{ scenario: string; step: string; ours: number | undefined; withinMs: readonly [number, number] | undefined }> = [];

// A node's requests by method and resource, most frequent first: `GET pods/<name> ×12, …`.
function requestShapes(requests: readonly RecordedRequest[]): string {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const shape = `${r.method} ${r.path.replace(/^\/apis?\/[^/]+(\/v1)?/, '').replace(/\/namespaces\/[^/]+/, '').replace(/^\/([a-z]+)\/[^/]+/, '/$1/*').slice(1)}`;
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`).join(', ');
}

describe('differential: event sequences of the real kubelet and our agent', () => {
  const runs: ScenarioRun[] = [];
  const found: Difference[] = [];
  let suiteStart = 0;

  before(async () => {
    suiteStart = performance.now();
    await cp.adminApi.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    // ServiceAccount admission wants the `default` ServiceAccount for ordinary pods.
    await waitForDefaultServiceAccount(cp.adminApi, NAMESPACE);
    recorder = await EventRecorder.start(cp.cluster.adminKubeconfig, [REAL, OURS]);
    sides.push(await startRealSide());
    sides.push(await startOurSide());
  });

  for (const scenario of SELECTED) {
    it(`scenario ${scenario.name}`, async (t) => {
      let run: ScenarioRun;
      try {
        run = await runScenario(scenario);
      } catch (err) {
        for (const s of sides) {
          const lines = (await s.logs()).split('\n');
          // The lines about the scenario's pods say which path a node took; the tail, what it did last.
          const names = scenario.pods.map((pod) => mirrorName(s, pod));
          const about = lines.filter((line) => names.some((name) => line.includes(name))).slice(-30);
          process.stderr.write(`--- ${s.node} log, lines naming ${names.join(', ')} ---\n${about.join('\n')}\n`);
          process.stderr.write(`--- ${s.node} log (tail) ---\n${lines.slice(-30).join('\n')}\n`);
        }
        throw err;
      }
      runs.push(run);
      for (const s of sides) {
        const w = run.windows.get(s)!;
        t.diagnostic(`${s.label}: ${formatMs(w.t1 - w.t0)} from the action to the end state`);
      }
      found.push(...compareRun(run, t));
    });
  }

  it('every difference is an events row of docs/kubelet-differences.md, and every row still occurs', async (t) => {
    assert.equal(runs.length, SELECTED.length, 'every scenario ran');
    if (ONLY !== undefined) t.diagnostic(`DIFF_SCENARIOS: only ${SELECTED.map((x) => x.name).join(', ')}`);
    for (const d of found) t.diagnostic(describeDifference(d));
    const listed = rowsInScope(parseListedDifferences(await readFile(DIFFERENCES_DOC, 'utf8')));
    const { unlisted, stale } = reconcile(found, listed, ['events']);
    const minutes = (performance.now() - suiteStart) / 60_000;
    t.diagnostic(`suite: ${formatMs(performance.now() - suiteStart)}; recorder watches resumed: ${recorder!.resumed}`);
    // Load, for the record (the Node and Lease heartbeats are not compared here).
    for (const s of sides) {
      const writes = (kind: 'node' | 'lease', namespace?: string): number => recorder!.about(kind, s.node, namespace).filter((r) => r.type === 'MODIFIED').length;
      const requests = s.proxy.requests.filter((r) => !r.watch);
      const heartbeats = `Node written ${writes('node')} times, Lease ${writes('lease', 'kube-node-lease')} times`;
      t.diagnostic(`${s.label}: ${requests.length} requests in ${minutes.toFixed(1)} min (${requestShapes(requests)}); ${heartbeats}`);
    }
    const offTime = timings.filter((x) => x.ours === undefined || outsideWindow(x.ours, x.withinMs));
    assert.deepEqual(
      offTime.map(
        (x) =>
          `${x.scenario} ${x.step}: ours ${x.ours === undefined ? 'none' : formatMs(x.ours)}` +
          (x.withinMs !== undefined ? `, window ${formatMs(x.withinMs[0])}–${formatMs(x.withinMs[1])}` : ''),
      ),
      [],
      'our timings outside their window',
    );
    for (const d of unlisted) await explainReasonDifference(d, t);
    assert.deepEqual(unlisted.map(describeDifference), [], 'differences docs/kubelet-differences.md does not list (fix them or list them with their reason)');
    assert.deepEqual(stale, [], 'listed differences that no longer occur: remove them from docs/kubelet-differences.md');
  });
});
