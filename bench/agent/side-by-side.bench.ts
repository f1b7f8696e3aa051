// The real kubelet (v1.34.4, kubemark's fake runtime: tools/hollow-kubelet) and our agent side
// by side on one local control plane, each on its own node, one after the other (never both
// at once, so they do not share the two cores), with the same kubeAPIQPS/kubeAPIBurst (the
// kubelet's v1.34 defaults, 50/100) and the same maxPods. Everything else is each one's
// default (fileCheckFrequency 20 s, housekeeping 2 s, node status 10 s, lease, sync 1 min).
//
// Idle: N manifests are in the directory when the process starts; once all N mirrors are
// Running (N = 0: the Node is Ready and the Lease exists) and a settling pause has passed, one
// window measures RSS (VmRSS, sampled every second), CPU (utime + stime from /proc/<pid>/stat)
// and the API writes each one sends (its own request counters), with the Node, Lease and
// Event changes the API server saw as a cross-check.
//
// Burst: with the agent started, a warm-up mirror Running and its token bucket refilled, N
// manifests are renamed into the directory at once: time until the watch has seen all N
// mirrors, then all N Running; then all N manifests are removed and, as soon as that is done,
// one new manifest is renamed in: time until all N mirrors are gone, and until the new one's
// mirror appears. Repeated, alternating which agent goes first; the median counts.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, type V1NodeCondition } from '@kubernetes/client-node';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { NodePodObserver, createNamespace, kubeConfigFromFile, manifestYaml, pool, tempDir, type RequestCounts, type RequestLogEntry } from './common.js';
import { bundledAgentChild } from './agent-child-bundle.js';
import { ObjectChangeCounter, type ObjectChanges } from './object-changes.js';
import { countsDelta, procCpuMs, procRss, requestCount, startSubject, writeCount, SUBJECT_KINDS, type Subject, type SubjectKind } from './subjects.js';

/** The kubelet's defaults in v1.34 (pkg/kubelet/apis/config/v1beta1/defaults.go), on both. */
export const SIDE_BY_SIDE_QPS = 50;
export const SIDE_BY_SIDE_BURST = 100;
/** Above the largest size on both; the kubelet's default 110 would reject most of 1,000 pods. */
export const SIDE_BY_SIDE_MAX_PODS = 1100;

export interface SideBySideSizes {
  idleSizes: number[];
  burstSizes: number[];
  /** Runs per agent and burst size. */
  burstRepeats: Record<number, number>;
  /** Pause between convergence and the idle window. */
  settleMs: number;
  /** The idle window with pods. */
  idleWindowMs: number;
  /** The idle window with no pods: in a full run one nodeStatusReportFrequency (5 min). */
  idleWindowZeroMs: number;
  /** Pause after the warm-up mirror and after "all Running" in a burst run. */
  burstSettleMs: number;
  /** Static pods running when the process is stopped and started again. */
  restartSizes: number[];
  /** Restart runs per agent and size. */
  restartRepeats: Record<number, number>;
}

export function sideBySideSizes(quick: boolean): SideBySideSizes {
  const sizes: SideBySideSizes = quick
    ? {
        idleSizes: [0, 100],
        burstSizes: [1, 100],
        burstRepeats: { 1: 1, 100: 1 },
        settleMs: 3_000,
        idleWindowMs: 6_000,
        idleWindowZeroMs: 6_000,
        burstSettleMs: 2_000,
        restartSizes: [0, 100],
        restartRepeats: { 0: 1, 100: 1 },
      }
    : {
        idleSizes: [0, 100, 1_000],
        burstSizes: [1, 100, 1_000],
        burstRepeats: { 1: 6, 100: 4, 1_000: 2 },
        settleMs: 30_000,
        idleWindowMs: 60_000,
        idleWindowZeroMs: 300_000,
        burstSettleMs: 3_000,
        restartSizes: [0, 100, 1_000],
        restartRepeats: { 0: 2, 100: 2, 1_000: 1 },
      };
  // For profiling and quick looks (results are then not written, see run-agent.ts).
  const list = (v: string | undefined): number[] | undefined =>
    v === undefined ? undefined : v.split(',').filter(Boolean).map(Number);
  const idle = list(process.env.BENCH_SBS_IDLE);
  const burst = list(process.env.BENCH_SBS_BURST);
  const restart = list(process.env.BENCH_SBS_RESTART);
  if (idle) sizes.idleSizes = idle;
  if (burst) sizes.burstSizes = burst;
  if (restart) sizes.restartSizes = restart;
  if (process.env.BENCH_SBS_REPEATS) {
    for (const n of sizes.burstSizes) sizes.burstRepeats[n] = Number(process.env.BENCH_SBS_REPEATS);
    for (const n of sizes.restartSizes) sizes.restartRepeats[n] = Number(process.env.BENCH_SBS_REPEATS);
  }
  return sizes;
}

/** Whether BENCH_SBS_* narrowed the run (its results are then not the benchmark's). */
export function sideBySideCustomised(): boolean {
  return ['BENCH_SBS_IDLE', 'BENCH_SBS_BURST', 'BENCH_SBS_RESTART', 'BENCH_SBS_REPEATS', 'BENCH_SBS_KINDS', 'BENCH_SBS_BUNDLED'].some((k) => process.env[k] !== undefined);
}

function kinds(): SubjectKind[] {
  const only = process.env.BENCH_SBS_KINDS?.split(',').filter(Boolean);
  return SUBJECT_KINDS.filter((k) => !only || only.includes(k));
}

export const sideBySideNode = (kind: SubjectKind, scenario: string): string => `${kind === 'kubelet' ? 'real' : 'ours'}-${scenario}`;

/** A node per restart run: each run's first start registers its Node afresh. */
const restartScenario = (pods: number, repeat: number): string => `restart-${pods}-r${repeat}`;

export function sideBySideNodes(sizes: SideBySideSizes): string[] {
  const scenarios = [
    ...sizes.idleSizes.map((n) => `idle-${n}`),
    ...sizes.burstSizes.map((n) => `burst-${n}`),
    ...sizes.restartSizes.flatMap((n) => Array.from({ length: sizes.restartRepeats[n] ?? 1 }, (_, r) => restartScenario(n, r))),
  ];
  return SUBJECT_KINDS.flatMap((k) => scenarios.map((s) => sideBySideNode(k, s)));
}

export interface IdleRow {
  kind: SubjectKind;
  pods: number;
  /** 1 when this agent was measured first at this size, 2 second. */
  order: number;
  /** Process start → all mirrors Running (0 pods: Node Ready and Lease present). */
  convergeMs: number;
  windowMs: number;
  /** Mean of the VmRSS samples over the window. */
  rssBytes: number;
  rssMaxBytes: number;
  /** Means of RssAnon (private) and RssFile (mapped program code) over the same samples. */
  rssAnonBytes: number;
  rssFileBytes: number;
  rssSamples: number;
  /** CPU time ÷ wall time over the window, in % of one core. */
  cpuPercent: number;
  /** Every POST, PUT, PATCH and DELETE the agent sent in the window. */
  writes: number;
  writesPerMinute: number;
  /** The agent's requests in the window, by method and status. */
  requests: RequestCounts;
  /** What the API server saw change in the window (watch events). */
  changes: ObjectChanges & { pods: number };
  changesPerMinute: number;
}

export interface BurstRun {
  kind: SubjectKind;
  pods: number;
  repeat: number;
  order: number;
  /** Manifests renamed in → all N mirrors in the watch. */
  mirroredMs: number | null;
  /** → all N mirrors Running. */
  runningMs: number | null;
  /** All N manifests removed → all N mirrors gone. */
  removedMs: number | null;
  /** A manifest renamed in right after the removals → its mirror in the watch. */
  lateMirrorMs: number | null;
  /** Phases that did not finish within their deadline (their figure is null). */
  timedOut: string[];
  /** The agent's requests from the burst until a pause after all Running. */
  createRequests: RequestCounts;
  /** The agent's requests from the removal until a pause after all gone and the new mirror there. */
  removeRequests: RequestCounts;
}

export interface RestartRun {
  kind: SubjectKind;
  pods: number;
  repeat: number;
  order: number;
  /** First start → all N mirrors Running (N = 0: Node Ready and Lease present). */
  firstConvergeMs: number;
  /** Second start (the process launched again) → the Node Ready in a status the new process wrote. */
  readyMs: number | null;
  /** Second start → the new process reports all N pods Running on its /pods (null with N = 0). */
  runningMs: number | null;
  /** Mirrors Running in the API at that moment (N when no mirror left Running meanwhile). */
  mirrorsRunningInApi: number | null;
  timedOut: string[];
  /** Every request the restarted process sent, from its start until a pause after both marks. */
  requests: RequestCounts;
  /** Pod changes the API server reported on the node from the restart until then (status writes, mirrors replaced). */
  podChanges: number;
}

export type BurstPhase = 'mirroredMs' | 'runningMs' | 'removedMs' | 'lateMirrorMs';
export const BURST_PHASES: readonly BurstPhase[] = ['mirroredMs', 'runningMs', 'removedMs', 'lateMirrorMs'];

export interface SideBySideResult {
  qps: number;
  burst: number;
  maxPods: number;
  sizes: SideBySideSizes;
  idle: IdleRow[];
  bursts: BurstRun[];
  restarts: RestartRun[];
}

const round = (n: number, digits = 0): number => Math.round(n * 10 ** digits) / 10 ** digits;
const mean = (values: readonly number[]): number => Math.round(values.reduce((a, b) => a + b, 0) / values.length);

/** The Node's Ready condition as last written (undefined: no Node or no condition). */
async function readyCondition(kc: ReturnType<typeof kubeConfigFromFile>, node: string): Promise<V1NodeCondition | undefined> {
  return kc
    .makeApiClient(CoreV1Api)
    .readNode({ name: node })
    .then(
      (n) => n.status?.conditions?.find((c) => c.type === 'Ready'),
      () => undefined,
    );
}

/** Milliseconds since the epoch of a condition's heartbeat (client-node gives a Date; -∞ when absent). */
const heartbeatOf = (c: V1NodeCondition | undefined): number => (c?.lastHeartbeatTime === undefined ? -Infinity : new Date(c.lastHeartbeatTime).getTime());

/**
 * Waits for the Node's Ready condition and its Lease (the agent with no pods has converged).
 * With `heartbeatAfter`, only a Ready condition whose heartbeat is later counts: one written by
 * a process started after that time, not the one its predecessor left behind.
 */
async function nodeReady(kc: ReturnType<typeof kubeConfigFromFile>, node: string, timeoutMs: number, heartbeatAfter = -Infinity): Promise<void> {
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const condition = await readyCondition(kc, node);
    const ready = condition?.status === 'True' && heartbeatOf(condition) > heartbeatAfter;
    const lease = ready && (await coordination.readNamespacedLease({ namespace: 'kube-node-lease', name: node }).then(() => true, () => false));
    if (ready && lease) return;
    if (performance.now() > deadline) throw new Error(`node ${node} not Ready with a Lease within ${timeoutMs} ms`);
    await delay(100);
  }
}

async function withLogsOnError<T>(subject: Subject, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const log = await subject.logs();
    if (log) process.stderr.write(`--- ${subject.kind} log (tail) ---\n${log.split('\n').slice(-40).join('\n')}\n`);
    throw err;
  }
}

/** A namespace named after the node, a directory with `pods` manifests in it, and a watch of the node's pods. */
async function prepareNode(cluster: LocalCluster, node: string, prefix: string, pods: number) {
  const adminKc = kubeConfigFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  const namespace = node;
  await createNamespace(admin, namespace);
  const dir = await tempDir('kp-bench-sbs-');
  const manifests = join(dir, 'manifests');
  await mkdir(manifests);
  await pool(
    Array.from({ length: pods }, (_, i) => i),
    64,
    (i) => writeFile(join(manifests, `${prefix}-${i}.yaml`), manifestYaml(`${prefix}-${i}`, namespace)),
  );
  const observer = new NodePodObserver(adminKc, node);
  await observer.start();
  return { adminKc, admin, namespace, dir, manifests, observer };
}

async function idleRun(cluster: LocalCluster, kind: SubjectKind, pods: number, order: number, sizes: SideBySideSizes): Promise<IdleRow> {
  const node = sideBySideNode(kind, `idle-${pods}`);
  const { adminKc, admin, namespace, dir, manifests, observer } = await prepareNode(cluster, node, 'idle', pods);
  const t0 = performance.now();
  const subject = await startSubject({ cluster, kind, node, manifestDir: manifests, workDir: dir, qps: SIDE_BY_SIDE_QPS, burst: SIDE_BY_SIDE_BURST, maxPods: SIDE_BY_SIDE_MAX_PODS });
  try {
    return await withLogsOnError(subject, async () => {
      if (pods === 0) await nodeReady(adminKc, node, 120_000);
      else await observer.until(() => observer.running === pods, `${pods} mirrors Running on ${node}`, 120_000 + pods * 300);
      const convergeMs = performance.now() - t0;
      await delay(sizes.settleMs);

      const windowMs = pods === 0 ? sizes.idleWindowZeroMs : sizes.idleWindowMs;
      const counter = new ObjectChangeCounter(adminKc, node);
      await counter.start();
      const podEvents0 = observer.events;
      // The kubelet's counters are read over HTTP: outside the CPU window.
      const requests0 = await subject.requestCounts();
      const cpu0 = procCpuMs(subject.pid);
      const w0 = performance.now();
      const rss: number[] = [];
      const anon: number[] = [];
      const file: number[] = [];
      for (;;) {
        const sample = procRss(subject.pid);
        rss.push(sample.rss);
        anon.push(sample.anon);
        file.push(sample.file);
        const left = windowMs - (performance.now() - w0);
        if (left <= 0) break;
        await delay(Math.min(1000, left));
      }
      const cpu1 = procCpuMs(subject.pid);
      const wall = performance.now() - w0;
      const requests = countsDelta(await subject.requestCounts(), requests0);
      const changes = { ...counter.stop(), pods: observer.events - podEvents0 };
      const writes = writeCount(requests);
      const perMinute = (n: number): number => round((n / wall) * 60_000, 1);
      return {
        kind,
        pods,
        order,
        convergeMs: Math.round(convergeMs),
        windowMs: Math.round(wall),
        rssBytes: mean(rss),
        rssMaxBytes: Math.max(...rss),
        rssAnonBytes: mean(anon),
        rssFileBytes: mean(file),
        rssSamples: rss.length,
        cpuPercent: round(((cpu1 - cpu0) / wall) * 100, 2),
        writes,
        writesPerMinute: perMinute(writes),
        requests,
        changes,
        changesPerMinute: perMinute(changes.node + changes.lease + changes.events + changes.pods),
      };
    });
  } finally {
    await subject.stop();
    observer.stop();
    await admin.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

async function burstRun(cluster: LocalCluster, kind: SubjectKind, pods: number, repeat: number, order: number, sizes: SideBySideSizes): Promise<BurstRun> {
  const node = sideBySideNode(kind, `burst-${pods}`);
  const adminKc = kubeConfigFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  // A namespace per run: nothing of an earlier run (or of the other agent) can be in the way.
  const namespace = `${node}-r${repeat}`;
  await createNamespace(admin, namespace);
  const dir = await tempDir('kp-bench-sbs-');
  const manifests = join(dir, 'manifests');
  const staging = join(dir, 'staging');
  await mkdir(manifests);
  await mkdir(staging);
  const observer = new NodePodObserver(adminKc, node);
  await observer.start();
  const subject = await startSubject({
    cluster,
    kind,
    node,
    manifestDir: manifests,
    workDir: dir,
    qps: SIDE_BY_SIDE_QPS,
    burst: SIDE_BY_SIDE_BURST,
    maxPods: SIDE_BY_SIDE_MAX_PODS,
    recordRequestLog: process.env.BENCH_SBS_REQUEST_LOG !== undefined,
  });
  const has = (name: string): boolean => observer.pods.has(`${namespace}/${name}-${node}`);
  try {
    return await withLogsOnError(subject, async () => {
      // Warm-up: Node registered, sources and pod workers running, then the token bucket refills.
      await writeFile(join(manifests, 'warm.yaml'), manifestYaml('warm', namespace));
      await observer.until(() => observer.running === 1, `warm-up mirror Running on ${node}`, 120_000);
      const names = Array.from({ length: pods }, (_, i) => `bulk-${i}`);
      await pool(names, 64, (n) => writeFile(join(staging, `${n}.yaml`), manifestYaml(n, namespace)));
      await writeFile(join(staging, 'late.yaml'), manifestYaml('late', namespace));
      await delay(sizes.burstSettleMs);
      await subject.agent?.requestLog(); // drops what the start-up sent

      const timedOut: string[] = [];
      const timed = async (phase: string, from: number, wait: Promise<void>): Promise<number | null> => {
        try {
          await wait;
          return Math.round(performance.now() - from);
        } catch (err) {
          if (!/timed out/.test((err as Error).message)) throw err;
          timedOut.push(phase);
          return null;
        }
      };
      const createDeadline = 120_000 + pods * 300;
      const removeDeadline = 120_000 + pods * 900;
      const total = pods + 1;

      const requests0 = await subject.requestCounts();
      const t0 = performance.now();
      await pool(names, 64, (n) => rename(join(staging, `${n}.yaml`), join(manifests, `${n}.yaml`)));
      const mirrored = timed('mirrored', t0, observer.until(() => observer.mirrors === total, `${pods} mirrors on ${node}`, createDeadline));
      const runningMs = await timed('running', t0, observer.until(() => observer.running === total, `${pods} mirrors Running on ${node}`, createDeadline));
      const mirroredMs = await mirrored;

      // The pause also lets the last responses reach the agents' request counters (the watch
      // can show a change before the agent that made it has read the answer).
      await delay(sizes.burstSettleMs);
      const requests1 = await subject.requestCounts();
      const t1 = performance.now();
      await pool(names, 64, (n) => rm(join(manifests, `${n}.yaml`)));
      const tLate = performance.now();
      await rename(join(staging, 'late.yaml'), join(manifests, 'late.yaml'));
      // Mirrors that are neither the warm-up's nor the late one's are the burst's.
      const burstMirrors = (): number => observer.mirrors - (has('warm') ? 1 : 0) - (has('late') ? 1 : 0);
      const [removedMs, lateMirrorMs] = await Promise.all([
        timed('removed', t1, observer.until(() => burstMirrors() === 0, `${pods} mirrors gone on ${node}`, removeDeadline)),
        timed('late mirror', tLate, observer.until(() => has('late'), `the late mirror on ${node}`, removeDeadline)),
      ]);
      await delay(sizes.burstSettleMs);
      const requests2 = await subject.requestCounts();
      if (process.env.BENCH_SBS_REQUEST_LOG && subject.agent) {
        const log: RequestLogEntry[] = await subject.agent.requestLog();
        const origin = performance.timeOrigin;
        const marks = { t0: origin + t0, t1: origin + t1, tLate: origin + tLate };
        await writeFile(join(process.env.BENCH_SBS_REQUEST_LOG, `${kind}-${pods}-r${repeat}.json`), JSON.stringify({ marks, mirroredMs, runningMs, removedMs, lateMirrorMs, log }));
      }
      return {
        kind,
        pods,
        repeat,
        order,
        mirroredMs,
        runningMs,
        removedMs,
        lateMirrorMs,
        timedOut,
        createRequests: countsDelta(requests1, requests0),
        removeRequests: countsDelta(requests2, requests1),
      };
    });
  } finally {
    await subject.stop();
    observer.stop();
    await admin.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * N static pods Running, the process stopped and launched again on the same node, manifest
 * directory (and, for the kubelet, root directory): how long until the new process has the
 * Node Ready and reports every pod Running, and what it writes meanwhile.
 */
async function restartRun(cluster: LocalCluster, kind: SubjectKind, pods: number, repeat: number, order: number, sizes: SideBySideSizes): Promise<RestartRun> {
  const node = sideBySideNode(kind, restartScenario(pods, repeat));
  const { adminKc, admin, namespace, dir, manifests, observer } = await prepareNode(cluster, node, 'restart', pods);
  const requestLogDir = process.env.BENCH_SBS_REQUEST_LOG;
  const options = { cluster, kind, node, manifestDir: manifests, workDir: dir, qps: SIDE_BY_SIDE_QPS, burst: SIDE_BY_SIDE_BURST, maxPods: SIDE_BY_SIDE_MAX_PODS, rootDir: join(dir, 'root'), recordRequestLog: requestLogDir !== undefined };
  const convergeDeadline = 120_000 + pods * 300;
  const t0 = performance.now();
  let subject = await startSubject(options);
  try {
    const firstConvergeMs = await withLogsOnError(subject, async () => {
      await nodeReady(adminKc, node, 120_000);
      if (pods > 0) await observer.until(() => observer.running === pods, `${pods} mirrors Running on ${node}`, convergeDeadline);
      return Math.round(performance.now() - t0);
    });
    await delay(sizes.burstSettleMs);
    await subject.stop();
    // Read once the old process is gone: any later heartbeat is the new process's.
    const heartbeat = heartbeatOf(await readyCondition(adminKc, node));

    const podEvents0 = observer.events;
    const timedOut: string[] = [];
    const t1 = performance.now();
    let readySeen: number | undefined;
    const ready = nodeReady(adminKc, node, convergeDeadline, heartbeat).then(
      () => Math.round((readySeen = performance.now()) - t1),
      () => (timedOut.push('Node Ready'), null),
    );
    subject = await startSubject(options);
    const restarted = subject;
    return await withLogsOnError(restarted, async () => {
      let runningMs: number | null = null;
      let mirrorsRunningInApi: number | null = null;
      if (pods > 0) {
        // The node's own view: a kubelet lists a pod Running once its new status manager has
        // a status for it; ours once it has taken the pod over.
        const every = pods >= 1_000 ? 500 : 100;
        for (const deadline = performance.now() + convergeDeadline; ; await delay(every)) {
          const running = await restarted.podsRunning().catch(() => 0);
          if (running === pods) {
            runningMs = Math.round(performance.now() - t1);
            mirrorsRunningInApi = observer.running;
            break;
          }
          if (performance.now() > deadline) {
            timedOut.push('all Running');
            break;
          }
        }
      }
      const readyMs = await ready;
      await delay(sizes.burstSettleMs);
      if (requestLogDir !== undefined) {
        // Where the restart's time went: the child's stages and requests beside the benchmark's marks (ms since the epoch).
        const origin = performance.timeOrigin;
        const marks = { launched: origin + t1, readySeen: readySeen === undefined ? null : origin + readySeen };
        const agent = restarted.agent;
        const detail = agent ? { startup: await agent.startup(), log: await agent.requestLog() } : { pid: restarted.pid };
        await writeFile(join(requestLogDir, `restart-${kind}-${pods}-r${repeat}.json`), JSON.stringify({ marks, readyMs, ...detail }));
      }
      return {
        kind,
        pods,
        repeat,
        order,
        firstConvergeMs,
        readyMs,
        runningMs,
        mirrorsRunningInApi,
        timedOut,
        requests: await restarted.requestCounts(),
        podChanges: observer.events - podEvents0,
      };
    });
  } finally {
    await subject.stop();
    observer.stop();
    await admin.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runSideBySideBench(cluster: LocalCluster, sizes: SideBySideSizes, log: (line: string) => void = (l) => console.error(l)): Promise<SideBySideResult> {
  const selected = kinds();
  // Bundled before any timing starts: a first start must not include esbuild's run.
  if (selected.includes('ours')) await bundledAgentChild();
  // Made here rather than at the first write, which comes only after the first run's minutes.
  if (process.env.BENCH_SBS_REQUEST_LOG) await mkdir(process.env.BENCH_SBS_REQUEST_LOG, { recursive: true });
  const ordered = (first: 'kubelet' | 'ours'): SubjectKind[] => (first === 'kubelet' ? ['kubelet', 'ours'] : ['ours', 'kubelet']).filter((k) => selected.includes(k as SubjectKind)) as SubjectKind[];
  const idle: IdleRow[] = [];
  for (const [i, pods] of sizes.idleSizes.entries()) {
    for (const [j, kind] of ordered(i % 2 === 0 ? 'kubelet' : 'ours').entries()) {
      log(`side by side: ${kind}, idle with ${pods} static pods…`);
      const row = await idleRun(cluster, kind, pods, j + 1, sizes);
      log(`  RSS ${(row.rssBytes / 1048576).toFixed(1)} MiB, CPU ${row.cpuPercent} %, ${row.writesPerMinute} writes/min (converged in ${row.convergeMs} ms)`);
      idle.push(row);
    }
  }
  const bursts: BurstRun[] = [];
  for (const [i, pods] of sizes.burstSizes.entries()) {
    const repeats = sizes.burstRepeats[pods] ?? 1;
    for (let r = 0; r < repeats; r++) {
      // Alternates between repeats, and between sizes when there is one run per size.
      for (const [j, kind] of ordered((i + r) % 2 === 0 ? 'kubelet' : 'ours').entries()) {
        log(`side by side: ${kind}, burst of ${pods} (run ${r + 1} of ${repeats})…`);
        const run = await burstRun(cluster, kind, pods, r, j + 1, sizes);
        log(`  mirrored ${run.mirroredMs} ms, Running ${run.runningMs} ms, removed ${run.removedMs} ms, late mirror ${run.lateMirrorMs} ms${run.timedOut.length ? ` (timed out: ${run.timedOut.join(', ')})` : ''}`);
        bursts.push(run);
      }
    }
  }
  const restarts: RestartRun[] = [];
  for (const [i, pods] of sizes.restartSizes.entries()) {
    const repeats = sizes.restartRepeats[pods] ?? 1;
    for (let r = 0; r < repeats; r++) {
      for (const [j, kind] of ordered((i + r) % 2 === 0 ? 'kubelet' : 'ours').entries()) {
        log(`side by side: ${kind}, restart with ${pods} static pods (run ${r + 1} of ${repeats})…`);
        const run = await restartRun(cluster, kind, pods, r, j + 1, sizes);
        log(`  Node Ready ${run.readyMs} ms, all Running ${run.runningMs} ms, ${writeCount(run.requests)} writes${run.timedOut.length ? ` (timed out: ${run.timedOut.join(', ')})` : ''}`);
        restarts.push(run);
      }
    }
  }
  return { qps: SIDE_BY_SIDE_QPS, burst: SIDE_BY_SIDE_BURST, maxPods: SIDE_BY_SIDE_MAX_PODS, sizes, idle, bursts, restarts };
}

// ---- the table ----

/** Median of the values; a timed-out run counts as slower than any finished one. */
export function median(values: ReadonlyArray<number | null>): { value: number | null; timedOut: number } {
  const done = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  const timedOut = values.length - done.length;
  if (values.length === 0) return { value: null, timedOut };
  const all = [...done, ...Array<number>(timedOut).fill(Infinity)];
  const mid = all.length / 2;
  const v = all.length % 2 === 1 ? all[Math.floor(mid)]! : (all[mid - 1]! + all[mid]!) / 2;
  return { value: Number.isFinite(v) ? v : null, timedOut };
}

export interface TableCell {
  measure: string;
  kubelet: string;
  ours: string;
  /** ours ÷ kubelet; below 1 means we are ahead (every measure is lower-is-better). */
  ratio: number | null;
}

const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const duration = (ms: number | null): string => (ms === null ? 'timed out' : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

export function sideBySideCells(r: SideBySideResult): TableCell[] {
  const cells: TableCell[] = [];
  const idleOf = (kind: SubjectKind, pods: number): IdleRow | undefined => r.idle.find((x) => x.kind === kind && x.pods === pods);
  const push = (measure: string, k: number | undefined, o: number | undefined, show: (v: number) => string): void => {
    cells.push({
      measure,
      kubelet: k === undefined ? '–' : show(k),
      ours: o === undefined ? '–' : show(o),
      ratio: k === undefined || o === undefined || k === 0 ? null : round(o / k, 2),
    });
  };
  const pods = (n: number): string => `${n.toLocaleString('en-US')} static pod${n === 1 ? '' : 's'}`;
  for (const n of r.sizes.idleSizes) {
    push(`start with ${pods(n)} → ${n === 0 ? 'Node Ready' : 'all Running'} (one run)`, idleOf('kubelet', n)?.convergeMs, idleOf('ours', n)?.convergeMs, duration);
  }
  for (const n of r.sizes.idleSizes) push(`RSS, ${pods(n)}`, idleOf('kubelet', n)?.rssBytes, idleOf('ours', n)?.rssBytes, mib);
  for (const n of r.sizes.idleSizes) push(`idle CPU, ${pods(n)} (% of one core)`, idleOf('kubelet', n)?.cpuPercent, idleOf('ours', n)?.cpuPercent, (v) => `${v.toFixed(2)} %`);
  for (const n of r.sizes.idleSizes) push(`API writes per minute while idle, ${pods(n)}`, idleOf('kubelet', n)?.writesPerMinute, idleOf('ours', n)?.writesPerMinute, (v) => v.toFixed(1));
  const label: Record<BurstPhase, (n: number) => string> = {
    mirroredMs: (n) => `${n.toLocaleString('en-US')} manifest${n === 1 ? '' : 's'} written at once → all mirrored`,
    runningMs: (n) => `${n.toLocaleString('en-US')} manifest${n === 1 ? '' : 's'} written at once → all Running`,
    removedMs: (n) => `${n.toLocaleString('en-US')} manifest${n === 1 ? '' : 's'} removed at once → all mirrors gone`,
    lateMirrorMs: (n) => `manifest written just after removing ${n.toLocaleString('en-US')} → its mirror`,
  };
  for (const phase of BURST_PHASES) {
    for (const n of r.sizes.burstSizes) {
      const of = (kind: SubjectKind) => median(r.bursts.filter((b) => b.kind === kind && b.pods === n).map((b) => b[phase]));
      const k = of('kubelet');
      const o = of('ours');
      const runs = r.bursts.filter((b) => b.kind === 'ours' && b.pods === n).length;
      const show = (m: { value: number | null; timedOut: number }): string =>
        m.value === null ? 'timed out' : `${duration(m.value)}${m.timedOut > 0 ? ` (${m.timedOut} timed out)` : ''}`;
      cells.push({
        measure: `${label[phase](n)} (median of ${runs})`,
        kubelet: show(k),
        ours: show(o),
        ratio: k.value === null || o.value === null || k.value === 0 ? null : round(o.value / k.value, 2),
      });
    }
  }
  for (const n of r.sizes.burstSizes) {
    const runs = (kind: SubjectKind): BurstRun[] => r.bursts.filter((b) => b.kind === kind && b.pods === n);
    const deletes = (kind: SubjectKind): { all: number; notFound: number } | undefined =>
      runs(kind).length === 0
        ? undefined
        : {
            all: median(runs(kind).map((b) => requestCount(b.removeRequests, 'DELETE'))).value ?? 0,
            notFound: median(runs(kind).map((b) => requestCount(b.removeRequests, 'DELETE', '404'))).value ?? 0,
          };
    const k = deletes('kubelet');
    const o = deletes('ours');
    const show = (d: { all: number; notFound: number } | undefined): string => (d === undefined ? '–' : `${d.all.toLocaleString('en-US')} (${d.notFound.toLocaleString('en-US')} × 404)`);
    cells.push({
      measure: `DELETE requests sent while removing ${n.toLocaleString('en-US')} (median; answered 404)`,
      kubelet: show(k),
      ours: show(o),
      ratio: k === undefined || o === undefined || k.all === 0 ? null : round(o.all / k.all, 2),
    });
  }
  for (const n of r.sizes.restartSizes) {
    const runs = (kind: SubjectKind): RestartRun[] => (r.restarts ?? []).filter((x) => x.kind === kind && x.pods === n);
    const count = runs('ours').length;
    const timedCell = (measure: string, pick: (x: RestartRun) => number | null): void => {
      const k = median(runs('kubelet').map(pick));
      const o = median(runs('ours').map(pick));
      const show = (m: { value: number | null; timedOut: number }, runCount: number): string =>
        runCount === 0 ? '–' : m.value === null ? 'timed out' : `${duration(m.value)}${m.timedOut > 0 ? ` (${m.timedOut} timed out)` : ''}`;
      cells.push({
        measure,
        kubelet: show(k, runs('kubelet').length),
        ours: show(o, count),
        ratio: k.value === null || o.value === null || k.value === 0 ? null : round(o.value / k.value, 2),
      });
    };
    timedCell(`restart with ${pods(n)} → Node Ready (median of ${count})`, (x) => x.readyMs);
    if (n > 0) timedCell(`restart with ${pods(n)} → all Running again on its /pods (median of ${count})`, (x) => x.runningMs);
    const writes = (kind: SubjectKind): number | undefined => (runs(kind).length === 0 ? undefined : (median(runs(kind).map((x) => writeCount(x.requests))).value ?? 0));
    push(`API writes during a restart with ${pods(n)} (median of ${count})`, writes('kubelet'), writes('ours'), (v) => v.toLocaleString('en-US'));
  }
  return cells;
}

export function sideBySideTable(r: SideBySideResult): string {
  const lines = ['| measure (lower is better) | kubelet v1.34.4 | ours | ours ÷ kubelet |', '|---|---:|---:|---:|'];
  for (const c of sideBySideCells(r)) {
    const ratio = c.ratio === null ? '–' : c.ratio > 1 ? `**${c.ratio.toFixed(2)}** ⚠` : c.ratio.toFixed(2);
    lines.push(`| ${c.measure} | ${c.kubelet} | ${c.ours} | ${ratio} |`);
  }
  const behind = sideBySideCells(r).filter((c) => c.ratio !== null && c.ratio > 1);
  lines.push('', behind.length === 0 ? 'Ours is ahead or level in every cell.' : `Behind the kubelet in ${behind.length} cell(s) (⚠): ${behind.map((c) => c.measure).join('; ')}.`);
  return lines.join('\n');
}

/** Per agent and size: the idle figures in full (convergence, RSS peak, requests by method, changes). */
export function idleDetailTable(r: SideBySideResult): string {
  const lines = [
    '| agent | static pods | order | converge | RSS mean (max) | of which anon / file | CPU | writes in window | by method | changes seen (node / lease / events / pods) | events by reason | window |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|',
  ];
  for (const x of r.idle) {
    const byMethod = Object.entries(x.requests)
      .filter(([m]) => m !== 'GET')
      .map(([m, codes]) => `${m} ${Object.entries(codes).map(([c, n]) => `${n}×${c}`).join(' ')}`)
      .join(', ');
    lines.push(
      `| ${x.kind} | ${x.pods.toLocaleString('en-US')} | ${x.order} | ${duration(x.convergeMs)} | ${mib(x.rssBytes)} (${mib(x.rssMaxBytes)}) | ${mib(x.rssAnonBytes)} / ${mib(x.rssFileBytes)} | ${x.cpuPercent.toFixed(2)} % | ${x.writes} | ${byMethod || '–'} | ${x.changes.node} / ${x.changes.lease} / ${x.changes.events} / ${x.changes.pods} | ${Object.entries(x.changes.eventReasons).map(([r, n]) => `${r} ${n}`).join(', ') || '–'} | ${(x.windowMs / 1000).toFixed(0)} s |`,
    );
  }
  return lines.join('\n');
}

const writesByMethod = (c: RequestCounts): string =>
  Object.entries(c)
    .filter(([m]) => m !== 'GET')
    .map(([m, codes]) => `${m} ${Object.entries(codes).map(([code, n]) => `${n}×${code}`).join(' ')}`)
    .join(', ') || '–';

/** Every restart run, in the order they ran. */
export function restartDetailTable(r: SideBySideResult): string {
  const lines = [
    '| static pods | run | agent | order | first start → converged | restart → Node Ready | restart → all Running (its /pods) | mirrors Running in the API then | pod changes seen | writes by the restarted process (by method) |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const x of r.restarts ?? []) {
    lines.push(
      `| ${x.pods.toLocaleString('en-US')} | ${x.repeat + 1} | ${x.kind} | ${x.order} | ${duration(x.firstConvergeMs)} | ${duration(x.readyMs)} | ${x.pods === 0 ? '–' : duration(x.runningMs)} | ${x.mirrorsRunningInApi ?? '–'} | ${x.podChanges} | ${writesByMethod(x.requests)} |`,
    );
  }
  return lines.join('\n');
}

/** Every burst run, in the order they ran. */
export function burstDetailTable(r: SideBySideResult): string {
  const lines = ['| pods | run | agent | order | all mirrored | all Running | all gone | late mirror | writes to create (by method) | writes to remove (by method) |', '|---:|---:|---|---:|---:|---:|---:|---:|---|---|'];
  const writes = writesByMethod;
  for (const b of r.bursts) {
    lines.push(`| ${b.pods.toLocaleString('en-US')} | ${b.repeat + 1} | ${b.kind} | ${b.order} | ${duration(b.mirroredMs)} | ${duration(b.runningMs)} | ${duration(b.removedMs)} | ${duration(b.lateMirrorMs)} | ${writes(b.createRequests)} | ${writes(b.removeRequests)} |`);
  }
  return lines.join('\n');
}
