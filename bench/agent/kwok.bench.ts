// kwok (kubernetes-sigs/kwok v0.8.0 as a default kwokctl cluster runs it: node Leases, its shipped
// "fast" stages and the Lease heartbeat stage; tools/kwok) and `kubelet-pods
// fleet` on the same workload, one after the other, each on a fresh local control plane:
//
//   N Nodes without static pods Ready (the fleet registers its own from a template; kwok's are
//   created by this harness first, timed on their own) → idle window → P ordinary pods per node
//   created through the API with spec.nodeName → all Running → idle window → all deleted → all
//   gone.
//
// Idle windows: VmRSS of the subject's process (mean of 1 s samples), its CPU (utime + stime),
// and the control plane process's CPU (kube-apiserver, etcd, scheduler and controller manager
// run in one process here), after a settling pause, with this harness's own watches closed.
// Memory per node and per pod are RSS differences: per node against the same program serving
// one node (its own short run on the same control plane, first), per pod against the idle
// window without pods. Convergence is timed from watches opened before the step, and the CPU
// the subject, the control plane and this harness spent while pods started and while they
// stopped is read from the same instants.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { startLocalCluster, type LocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createApiClients, createConnectionPool } from '../../src/kube/api-clients.js';
import { unlimited } from '../../src/kube/rate-limiter.js';
import type { CoreV1Api as LeanCoreV1Api } from '../../src/kube/typed-apis.js';
import { waitForDefaultServiceAccount } from '../../test/helpers/control-plane.js';
import { KWOK_KWOKCTL_DEFAULTS, KWOK_NODE_ANNOTATION, KWOK_VERSION, startKwok } from '../../test/helpers/kwok.js';
import { benchNodeOptions, createNamespace, envChoices, envWholeNumber, pool, tempDir } from './common.js';
import { childPidWithArg, procCpuMs, procRss } from './subjects.js';
import { WatchedCount } from './watched-count.js';
import { countWrites, describeWrites, writeWritesAuditPolicy, type Phase, type PhaseWrites } from './audit-writes.js';
import type { AuditEvent } from '../../test/helpers/audit-log.js';

// The fleet runs in its default `--simulated-lifecycle=kubelet` only: under `instant` it runs
// static pods alone and leaves ordinary pods Pending (docs/lifecycle.md, "Ordinary pods").
export const PEERS = ['kwok', 'fleet'] as const;
export type PeerName = (typeof PEERS)[number];

export const PEER_LABELS: Record<PeerName, string> = {
  kwok: `kwok ${KWOK_VERSION}, kwokctl's defaults (fast stages, Leases)`,
  fleet: 'kubelet-pods fleet',
};

export interface KwokBenchSizes {
  nodes: number;
  podsPerNode: number;
  /** Creates and deletes in flight at once, the same for every subject. */
  concurrency: number;
  /** Pause after a convergence before an idle window. */
  settleMs: number;
  idleWindowMs: number;
  /** The one-node run that memory per node is measured against: its pause and window. */
  baseSettleMs: number;
  baseWindowMs: number;
}

export function kwokBenchSizes(quick: boolean, env: NodeJS.ProcessEnv = process.env): KwokBenchSizes {
  const base: KwokBenchSizes = quick
    ? { nodes: 20, podsPerNode: 5, concurrency: 20, settleMs: 5_000, idleWindowMs: 10_000, baseSettleMs: 3_000, baseWindowMs: 5_000 }
    : { nodes: 1_000, podsPerNode: 10, concurrency: 50, settleMs: 20_000, idleWindowMs: 60_000, baseSettleMs: 10_000, baseWindowMs: 10_000 };
  const num = (name: string, fallback: number): number => envWholeNumber(env, name, fallback);
  const podsPerNode = num('BENCH_KWOK_PODS_PER_NODE', base.podsPerNode);
  return {
    ...base,
    nodes: num('BENCH_KWOK_NODES', base.nodes),
    podsPerNode,
    // With 100 pods a node either peer may still be catching up when the wave's last pod is
    // seen (the fleet collects a large heap only after a longer quiet spell,
    // src/fleet/settle-gc.ts), so the idle window with pods would read the tail of the wave;
    // both peers get the same longer pause before both idle windows.
    settleMs: !quick && podsPerNode >= 100 ? LARGE_WAVE_SETTLE_MS : base.settleMs,
    idleWindowMs: num('BENCH_KWOK_IDLE_MS', base.idleWindowMs),
  };
}

/** The pause before an idle window in full runs of 100 pods a node or more. */
export const LARGE_WAVE_SETTLE_MS = 60_000;

/** BENCH_KWOK_FLEET_SETTINGS: a JSON object of fleet file fields added to the fleet's (experiments). */
export function fleetExtraSettings(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  const raw = env.BENCH_KWOK_FLEET_SETTINGS;
  if (raw === undefined || raw === '') return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`BENCH_KWOK_FLEET_SETTINGS: expected a JSON object, got ${raw}`);
  return parsed as Record<string, unknown>;
}

/** BENCH_KWOK_PEERS=kwok or =fleet picks one; both by default. */
export function kwokBenchPeers(env: NodeJS.ProcessEnv = process.env): PeerName[] {
  return envChoices(env, 'BENCH_KWOK_PEERS', PEERS);
}

export interface IdleWindow {
  windowMs: number;
  /** VmRSS, mean of 1 s samples. */
  rssBytes: number;
  rssMaxBytes: number;
  /** % of one core. */
  cpuPercent: number;
  /** The control plane process (API server, etcd, scheduler, controller manager), % of one core. */
  controlPlaneCpuPercent: number;
  /** The window's bounds, ms since the epoch (for the audit log's counts). */
  fromMs: number;
  toMs: number;
}

/**
 * CPU time spent while pods started or stopped (ms): the subject's, the control plane's and this
 * harness's (its creates or deletes and its watch). On a machine of few cores they share them,
 * so what the subject takes the API server does not get.
 */
export interface BurstCpu {
  subjectMs: number;
  controlPlaneMs: number;
  harnessMs: number;
}

/** The subject's own writes, from the API server's audit log (bench/agent/audit-writes.ts). */
export interface PeerWrites {
  /** First pod create sent → every pod Running. */
  start: PhaseWrites;
  /** First delete sent → no pod left. */
  stop: PhaseWrites;
  idle: PhaseWrites;
  idleWithPods: PhaseWrites;
}

export interface PeerRun {
  peer: PeerName;
  label: string;
  /** kwok only: the harness creating the N Nodes kwok then manages. */
  nodesCreatedMs?: number;
  /** Process start → every Node Ready (in a watch). */
  readyMs: number;
  /** The program serving one node alone, idle: what memory per node is measured against. */
  oneNode: IdleWindow;
  idle: IdleWindow;
  /** First pod create sent → last answered. */
  podsCreatedMs: number;
  podCreateFailures: number;
  /** First pod create sent → every pod Running (in a watch). */
  runningMs: number;
  /** CPU from the first create sent to every pod Running. */
  startCpu: BurstCpu;
  idleWithPods: IdleWindow;
  /** First delete sent → last answered. */
  podsDeleteSentMs: number;
  /** First delete sent → no pod left (in a watch). */
  goneMs: number;
  /** CPU from the first delete sent to no pod left. */
  stopCpu: BurstCpu;
  /** (idle RSS − one node's RSS) ÷ (N − 1). */
  rssBytesPerNode: number;
  /** (idle RSS with pods − idle RSS without) ÷ pods. */
  rssBytesPerPod: number;
  writes: PeerWrites;
  /** The fleet's own full GCs once quiet (src/fleet/settle-gc.ts), by phase, from its log. */
  settleGcs?: SettleGcsByPhase;
  loadAverageBefore: number[];
  loadAverageAfter: number[];
}

export interface KwokBenchResult {
  sizes: KwokBenchSizes;
  kwok: { version: string; stages: readonly string[]; nodeLeaseDurationSeconds: number; stageFiles: readonly string[] };
  runs: PeerRun[];
}

/** issueFleetToken's ServiceAccount, as the API server names it. */
const FLEET_USER = 'system:serviceaccount:kubelet-pods-fleet:kubelet-pods-fleet';
const NODE_PREFIX = 'kb-';
const BASE_NODE = 'kb-base';
const NAMESPACE = 'kwok-bench';
const round2 = (n: number): number => Math.round(n * 100) / 100;
const mean = (v: readonly number[]): number => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);

/** A subject process this harness started. */
interface Running {
  pid: number;
  stop(): Promise<void>;
  logTail(): Promise<string>;
  /** The fleet's settle GCs so far, from its log: epoch ms and pause. */
  settleGcs?(): Promise<{ atMs: number; pauseMs: number }[]>;
}

/** Count and longest pause of the fleet's settle GCs in each phase of the run. */
export type SettleGcsByPhase = Record<'start → idle' | 'create → all Running' | 'idle with pods' | 'delete → all gone', { count: number; maxPauseMs: number }>;

/** The lines `kubelet-pods fleet` logs for each settle GC (src/cli/fleet-command.ts). */
export function settleGcsInLog(log: string): { atMs: number; pauseMs: number }[] {
  const found: { atMs: number; pauseMs: number }[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('quiet after busy work')) continue;
    let entry: { time?: unknown; pauseMs?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // a line cut short when the fleet was stopped
    }
    if (typeof entry.time === 'number' && typeof entry.pauseMs === 'number') found.push({ atMs: entry.time, pauseMs: entry.pauseMs });
  }
  return found;
}

function byPhase(gcs: readonly { atMs: number; pauseMs: number }[], bounds: readonly [keyof SettleGcsByPhase, number, number][]): SettleGcsByPhase {
  const out = {} as SettleGcsByPhase;
  for (const [name, from, to] of bounds) {
    const inside = gcs.filter((g) => g.atMs >= from && g.atMs < to);
    out[name] = { count: inside.length, maxPauseMs: Math.max(0, ...inside.map((g) => g.pauseMs)) };
  }
  return out;
}

const isReady = (n: V1Node): boolean => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export function nodeWatch(kc: KubeConfig, admin: CoreV1Api, names: (name: string) => boolean): WatchedCount<V1Node> {
  return new WatchedCount<V1Node>({
    kc,
    path: '/api/v1/nodes',
    list: () => admin.listNode(),
    include: (n) => names(n.metadata?.name ?? ''),
    matches: isReady,
  });
}

export function podWatch(kc: KubeConfig, admin: CoreV1Api, namespace = NAMESPACE): WatchedCount<V1Pod> {
  return new WatchedCount<V1Pod>({
    kc,
    path: `/api/v1/namespaces/${namespace}/pods`,
    list: () => admin.listNamespacedPod({ namespace }),
    matches: (p) => p.status?.phase === 'Running',
  });
}

/** Samples one process (and the control plane) after `settleMs`, over `windowMs`. */
async function idleWindow(pid: number, controlPlanePid: number, settleMs: number, windowMs: number): Promise<IdleWindow> {
  await delay(settleMs);
  const cpu0 = procCpuMs(pid);
  const cp0 = procCpuMs(controlPlanePid);
  const fromMs = Date.now();
  const t0 = performance.now();
  const rss: number[] = [];
  for (;;) {
    rss.push(procRss(pid).rss);
    const left = windowMs - (performance.now() - t0);
    if (left <= 0) break;
    await delay(Math.min(1000, left));
  }
  const wall = performance.now() - t0;
  return {
    windowMs: Math.round(wall),
    rssBytes: Math.round(mean(rss)),
    rssMaxBytes: Math.max(...rss),
    cpuPercent: round2(((procCpuMs(pid) - cpu0) / wall) * 100),
    controlPlaneCpuPercent: round2(((procCpuMs(controlPlanePid) - cp0) / wall) * 100),
    fromMs,
    toMs: Date.now(),
  };
}

// kwok runs with the admin kubeconfig (as the harness does), so its client's User-Agent tells
// its writes apart; the fleet runs as its own ServiceAccount (kube-controller-manager's
// controllers are ServiceAccounts too, in kube-system).
const SUBJECT: Record<PeerName, (e: AuditEvent) => boolean> = {
  kwok: (e) => e.userAgent?.startsWith('kwok') ?? false,
  fleet: (e) => e.user?.username === FLEET_USER,
};

const epoch = (performanceMs: number): number => performance.timeOrigin + performanceMs;

const ownCpuMs = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Starts counting the CPU of the subject, the control plane and this process; the result's call ends it. */
function cpuFrom(pid: number, controlPlanePid: number): () => BurstCpu {
  const subject = procCpuMs(pid);
  const controlPlane = procCpuMs(controlPlanePid);
  const harness = ownCpuMs();
  return () => ({
    subjectMs: Math.round(procCpuMs(pid) - subject),
    controlPlaneMs: Math.round(procCpuMs(controlPlanePid) - controlPlane),
    harnessMs: Math.round(ownCpuMs() - harness),
  });
}

/** Retries a call a few times (the API server may answer 429 or time out under this load); `accept` ends it as done. */
export async function withRetries(call: () => Promise<unknown>, accept: (status: number | undefined) => boolean): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await call();
      return true;
    } catch (err) {
      const status = (err as { code?: number; statusCode?: number }).code ?? (err as { statusCode?: number }).statusCode;
      if (accept(status)) return true;
      await delay(200 * (attempt + 1));
    }
  }
  return false;
}

function kwokNode(name: string): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION.key]: KWOK_NODE_ANNOTATION.value },
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', type: 'kwok' },
    },
  };
}

function benchPod(node: string, i: number): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${node}-p${i}`, namespace: NAMESPACE, labels: { app: 'kwok-bench' } },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'pause:3.10' }] },
  };
}

interface Ctx {
  cluster: LocalCluster;
  dir: string;
  sizes: KwokBenchSizes;
  kc: KubeConfig;
  admin: CoreV1Api;
  /** The harness's writes: one keep-alive pool, no client-side limit. */
  lean: LeanCoreV1Api;
  /** Set by the kwok runs, for the report. */
  stageFiles?: readonly string[];
}

async function startKwokPeer(ctx: Ctx, logName: string): Promise<Running> {
  const logFile = join(ctx.dir, `${logName}.log`);
  const kwok = await startKwok({ kubeconfig: ctx.cluster.adminKubeconfig, logFile, ...KWOK_KWOKCTL_DEFAULTS });
  ctx.stageFiles = kwok.stageFiles;
  return { pid: kwok.pid, stop: () => kwok.stop(), logTail: async () => (await kwok.logs()).split('\n').slice(-30).join('\n') };
}

async function startFleetPeer(ctx: Ctx, logName: string, template: { name: string; count: number }): Promise<Running> {
  const kubeconfig = join(ctx.dir, 'fleet.kubeconfig');
  const configFile = join(ctx.dir, `${logName}.yaml`);
  const logFile = join(ctx.dir, `${logName}.log`);
  // The fleet file users write: one template, no static pods, every setting its default.
  const extra = fleetExtraSettings();
  await writeFile(configFile, JSON.stringify({ kubeconfig, readOnlyPort: 0, ...extra, templates: [template] }, null, 2));
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...benchNodeOptions(), cli, 'fleet', '--config', configFile], { stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const tail = async (): Promise<string> => (await readFile(logFile, 'utf8').catch(() => '')).split('\n').slice(-30).join('\n');
  return {
    pid: child.pid!,
    settleGcs: async () => settleGcsInLog(await readFile(logFile, 'utf8').catch(() => '')),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
    logTail: tail,
  };
}

function startPeer(ctx: Ctx, peer: PeerName, logName: string, template: { name: string; count: number }): Promise<Running> {
  if (peer === 'kwok') return startKwokPeer(ctx, logName);
  return startFleetPeer(ctx, logName, template);
}

/** Awaits `work`; a failure gets the last lines of the subject's log added to its message. */
async function orLog<T>(running: Running, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- log tail ---\n${await running.logTail()}`, { cause: err });
  }
}

/** The program serving one node alone, idle, on the same control plane; its Node and Lease go afterwards. */
async function oneNodeBaseline(ctx: Ctx, peer: PeerName, controlPlanePid: number): Promise<IdleWindow> {
  if (peer === 'kwok') await ctx.lean.createNode({ body: kwokNode(BASE_NODE) });
  const watch = nodeWatch(ctx.kc, ctx.admin, (name) => name === BASE_NODE);
  await watch.start();
  const running = await startPeer(ctx, peer, `${peer}-one-node`, { name: BASE_NODE, count: 1 });
  try {
    await orLog(running, watch.until((c) => c.matching === 1, `${BASE_NODE} Ready`, 120_000));
    watch.stop();
    return await idleWindow(running.pid, controlPlanePid, ctx.sizes.baseSettleMs, ctx.sizes.baseWindowMs);
  } finally {
    watch.stop();
    await running.stop();
    await ctx.admin.deleteNode({ name: BASE_NODE }).catch(() => undefined);
    await ctx.kc.makeApiClient(CoordinationV1Api).deleteNamespacedLease({ name: BASE_NODE, namespace: 'kube-node-lease' }).catch(() => undefined);
  }
}

async function runPeer(peer: PeerName, sizes: KwokBenchSizes, onKwok: (stageFiles: readonly string[]) => void): Promise<PeerRun> {
  const loadAverageBefore = loadavg();
  const cluster = await startLocalCluster({ nodes: [], auditPolicyFile: await writeWritesAuditPolicy() });
  const dir = await tempDir(`kp-bench-kwok-${peer}-`);
  try {
    const controlPlanePid = childPidWithArg(`--dir=${cluster.dir}`);
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.adminKubeconfig);
    const admin = kc.makeApiClient(CoreV1Api);
    const lean = createApiClients(kc, unlimited, { pool: createConnectionPool(sizes.concurrency) }).core;
    const ctx: Ctx = { cluster, dir, sizes, kc, admin, lean };
    await createNamespace(admin, NAMESPACE);
    await waitForDefaultServiceAccount(admin, NAMESPACE);
    if (peer !== 'kwok') await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });

    const oneNode = await oneNodeBaseline(ctx, peer, controlPlanePid);

    const { nodes, podsPerNode, concurrency } = sizes;
    const names = Array.from({ length: nodes }, (_, i) => `${NODE_PREFIX}${i}`);
    let nodesCreatedMs: number | undefined;
    if (peer === 'kwok') {
      const t = performance.now();
      let failed = 0;
      await pool(names, concurrency, async (name) => {
        if (!(await withRetries(() => lean.createNode({ body: kwokNode(name) }), (s) => s === 409))) failed++;
      });
      if (failed > 0) throw new Error(`${failed} of ${nodes} Nodes could not be created`);
      nodesCreatedMs = Math.round(performance.now() - t);
    }
    const isOurs = new Set(names);
    const nodesWatch = nodeWatch(kc, admin, (name) => isOurs.has(name));
    await nodesWatch.start();
    const t0 = performance.now();
    const running = await startPeer(ctx, peer, peer, { name: `${NODE_PREFIX}{i}`, count: nodes });
    try {
      const readyAt = await orLog(running, nodesWatch.until((c) => c.matching === nodes, `${nodes} Nodes Ready`, 120_000 + nodes * 300));
      nodesWatch.stop();
      if (peer === 'kwok') onKwok(ctx.stageFiles ?? []);
      const idle = await idleWindow(running.pid, controlPlanePid, sizes.settleMs, sizes.idleWindowMs);

      // P pods per node, through the API with spec.nodeName, node by node.
      const pods = names.flatMap((node) => Array.from({ length: podsPerNode }, (_, i) => benchPod(node, i)));
      const total = pods.length;
      const podsWatch = podWatch(kc, admin);
      await podsWatch.start();
      let createFailures = 0;
      const startCpuUntil = cpuFrom(running.pid, controlPlanePid);
      const c0 = performance.now();
      await pool(pods, concurrency, async (body) => {
        if (!(await withRetries(() => lean.createNamespacedPod({ namespace: NAMESPACE, body }), (s) => s === 409))) createFailures++;
      });
      const podsCreatedMs = Math.round(performance.now() - c0);
      if (createFailures > 0) throw new Error(`${createFailures} of ${total} pods could not be created`);
      const runningAt = await orLog(running, podsWatch.until((c) => c.matching === total, `${total} pods Running`, 120_000 + total * 20));
      const startCpu = startCpuUntil();
      podsWatch.stop();
      const idleWithPods = await idleWindow(running.pid, controlPlanePid, sizes.settleMs, sizes.idleWindowMs);

      const goneWatch = podWatch(kc, admin);
      await goneWatch.start();
      const stopCpuUntil = cpuFrom(running.pid, controlPlanePid);
      const d0 = performance.now();
      let deleteFailures = 0;
      await pool(pods, concurrency, async (pod) => {
        const name = pod.metadata!.name!;
        if (!(await withRetries(() => lean.deleteNamespacedPod({ namespace: NAMESPACE, name }), (s) => s === 404))) deleteFailures++;
      });
      const podsDeleteSentMs = Math.round(performance.now() - d0);
      if (deleteFailures > 0) throw new Error(`${deleteFailures} of ${total} pods could not be deleted`);
      const goneAt = await orLog(running, goneWatch.until((c) => c.total === 0, `all ${total} pods gone`, 120_000 + total * 20));
      const stopCpu = stopCpuUntil();
      goneWatch.stop();
      const settleGcs = running.settleGcs
        ? byPhase(await running.settleGcs(), [
            ['start → idle', epoch(t0), epoch(c0)],
            ['create → all Running', epoch(c0), epoch(runningAt)],
            ['idle with pods', epoch(runningAt), epoch(d0)],
            ['delete → all gone', epoch(d0), epoch(goneAt)],
          ])
        : undefined;
      const window = (name: string, w: IdleWindow): Phase => ({ name, fromMs: w.fromMs, toMs: w.toMs });
      const [start, stop, idleWrites, idleWithPodsWrites] = await countWrites(
        cluster.auditLogFile!,
        [
          { name: 'start', fromMs: epoch(c0), toMs: epoch(runningAt) },
          { name: 'stop', fromMs: epoch(d0), toMs: epoch(goneAt) },
          window('idle', idle),
          window('idle with pods', idleWithPods),
        ],
        SUBJECT[peer],
      );

      return {
        peer,
        label: PEER_LABELS[peer],
        ...(nodesCreatedMs !== undefined ? { nodesCreatedMs } : {}),
        readyMs: Math.round(readyAt - t0),
        oneNode,
        idle,
        podsCreatedMs,
        podCreateFailures: createFailures,
        runningMs: Math.round(runningAt - c0),
        startCpu,
        idleWithPods,
        podsDeleteSentMs,
        goneMs: Math.round(goneAt - d0),
        stopCpu,
        rssBytesPerNode: Math.round((idle.rssBytes - oneNode.rssBytes) / Math.max(1, nodes - 1)),
        rssBytesPerPod: Math.round((idleWithPods.rssBytes - idle.rssBytes) / total),
        writes: { start: start!, stop: stop!, idle: idleWrites!, idleWithPods: idleWithPodsWrites! },
        ...(settleGcs !== undefined ? { settleGcs } : {}),
        loadAverageBefore,
        loadAverageAfter: loadavg(),
      };
    } finally {
      nodesWatch.stop();
      await running.stop();
    }
  } finally {
    await cluster.dispose();
    // It holds the fleet's token; the logs' tails went into any error already.
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every peer in turn, each on a control plane of its own. */
export async function runKwokBench(sizes: KwokBenchSizes, peers: readonly PeerName[]): Promise<KwokBenchResult> {
  const runs: PeerRun[] = [];
  let stageFiles: readonly string[] = [];
  for (const peer of peers) {
    console.error(`kwok bench: ${PEER_LABELS[peer]}, ${sizes.nodes} nodes × ${sizes.podsPerNode} pods…`);
    runs.push(
      await runPeer(peer, sizes, (files) => {
        stageFiles = files;
      }),
    );
  }
  return { sizes, kwok: { version: KWOK_VERSION, ...KWOK_KWOKCTL_DEFAULTS, stageFiles }, runs };
}

const s = (ms: number | undefined): string => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);
const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;
const kib = (b: number): string => `${(b / 1024).toFixed(1)} KiB`;
const pct = (p: number): string => `${p.toFixed(2)} %`;
const cpuS = (ms: number): string => `${(ms / 1000).toFixed(1)} s of CPU`;
const perWrite = (ms: number): string => `${ms.toFixed(2)} ms`;
const perMinute = (w: PhaseWrites): number => (w.total / Math.max(1, w.durationMs)) * 60_000;

/** The table: one row per measure, a column per peer, and each fleet's ratio to kwok. */
export function kwokTable(r: KwokBenchResult): string {
  const { nodes, podsPerNode } = r.sizes;
  const pods = nodes * podsPerNode;
  const kwok = r.runs.find((x) => x.peer === 'kwok');
  const others = r.runs.filter((x) => x.peer !== 'kwok');
  const n = nodes.toLocaleString('en-US');
  const p = pods.toLocaleString('en-US');
  const rows: Array<[string, (x: PeerRun) => number | undefined, (v: number) => string]> = [
    [`${n} Nodes created by the harness (kwok's)`, (x) => x.nodesCreatedMs, s],
    [`all ${n} Nodes Ready (from the process start)`, (x) => x.readyMs, s],
    ['RSS, idle, no pods', (x) => x.idle.rssBytes, mib],
    ['CPU, idle, no pods (% of one core)', (x) => x.idle.cpuPercent, pct],
    ['control plane CPU while idle, no pods', (x) => x.idle.controlPlaneCpuPercent, pct],
    [`${p} pods created by the harness (first sent → last answered)`, (x) => x.podsCreatedMs, s],
    [`${p} pods: first create → all Running`, (x) => x.runningMs, s],
    ['its CPU, first create → all Running', (x) => x.startCpu.subjectMs, cpuS],
    ['control plane CPU, first create → all Running', (x) => x.startCpu.controlPlaneMs, cpuS],
    [`the harness's CPU, first create → all Running`, (x) => x.startCpu.harnessMs, cpuS],
    ['control plane CPU per write (its and the harness\'s creates), create → all Running', (x) => x.startCpu.controlPlaneMs / (x.writes.start.total + pods), perWrite],
    [`RSS, idle, ${p} pods`, (x) => x.idleWithPods.rssBytes, mib],
    [`CPU, idle, ${p} pods`, (x) => x.idleWithPods.cpuPercent, pct],
    [`control plane CPU while idle, ${p} pods`, (x) => x.idleWithPods.controlPlaneCpuPercent, pct],
    [`${p} deletes sent by the harness (first sent → last answered)`, (x) => x.podsDeleteSentMs, s],
    [`${p} pods deleted → all gone`, (x) => x.goneMs, s],
    ['its CPU, first delete → all gone', (x) => x.stopCpu.subjectMs, cpuS],
    ['control plane CPU, first delete → all gone', (x) => x.stopCpu.controlPlaneMs, cpuS],
    [`the harness's CPU, first delete → all gone`, (x) => x.stopCpu.harnessMs, cpuS],
    ['control plane CPU per write (its and the harness\'s deletes), delete → all gone', (x) => x.stopCpu.controlPlaneMs / (x.writes.stop.total + pods), perWrite],
    ['RSS serving one node (the base of the next row)', (x) => x.oneNode.rssBytes, mib],
    ['memory per node: (idle RSS − one node\'s) ÷ (nodes − 1)', (x) => x.rssBytesPerNode, kib],
    ['memory per pod: (idle RSS with pods − without) ÷ pods', (x) => x.rssBytesPerPod, kib],
    ['its API writes per pod, create → all Running', (x) => x.writes.start.total / pods, (v) => v.toFixed(2)],
    ['its API writes per pod, delete → all gone', (x) => x.writes.stop.total / pods, (v) => v.toFixed(2)],
    ['its reads of a pod (GET) per pod, create → all Running', (x) => x.writes.start.podReads / pods, (v) => v.toFixed(2)],
    ['its reads of a pod (GET) per pod, delete → all gone', (x) => x.writes.stop.podReads / pods, (v) => v.toFixed(2)],
    ['its API writes per minute, idle, no pods', (x) => perMinute(x.writes.idle), (v) => v.toFixed(0)],
    [`its API writes per minute, idle, ${p} pods`, (x) => perMinute(x.writes.idleWithPods), (v) => v.toFixed(0)],
    ['Lease renewals, create → all Running: p99 gap between a node\'s successful writes', (x) => x.writes.start.leaseGaps.p99Ms, s],
    ['the longest gap, create → all Running', (x) => x.writes.start.leaseGaps.maxMs, s],
    ['Lease renewals, delete → all gone: p99 gap', (x) => x.writes.stop.leaseGaps.p99Ms, s],
    ['the longest gap, delete → all gone', (x) => x.writes.stop.leaseGaps.maxMs, s],
  ];
  const head = ['measure', ...r.runs.map((x) => x.label), ...(kwok ? others.map((x) => `${x.label} ÷ kwok`) : [])];
  const lines = [`| ${head.join(' | ')} |`, `|---|${head.slice(1).map(() => '---:').join('|')}|`];
  for (const [label, get, fmt] of rows) {
    const values = r.runs.map(get);
    if (values.every((v) => v === undefined)) continue;
    const ratios = kwok
      ? others.map((x) => {
          const a = get(x);
          const b = get(kwok);
          return a === undefined || b === undefined || b <= 0 ? '–' : (a / b).toFixed(2);
        })
      : [];
    lines.push(`| ${[label, ...values.map((v) => (v === undefined ? '–' : fmt(v))), ...ratios].join(' | ')} |`);
  }
  lines.push('', 'Each subject\'s writes by verb and resource (from the API server\'s audit log), per pod while pods started and stopped, per minute while idle:', '');
  lines.push('| subject | per pod, create → all Running | per pod, delete → all gone | per minute, idle, no pods | per minute, idle, with pods |', '|---|---|---|---|---|');
  for (const x of r.runs) {
    const minutes = (w: PhaseWrites): number => Math.max(1, w.durationMs) / 60_000;
    const cells = [describeWrites(x.writes.start, pods), describeWrites(x.writes.stop, pods), describeWrites(x.writes.idle, minutes(x.writes.idle)), describeWrites(x.writes.idleWithPods, minutes(x.writes.idleWithPods))];
    lines.push(`| ${x.label} | ${cells.join(' | ')} |`);
  }
  const settled = r.runs.filter((x) => x.settleGcs !== undefined);
  if (settled.length > 0) {
    lines.push('', 'The fleet\'s own full GCs once quiet after busy work (src/fleet/settle-gc.ts, from its log), by phase: count (longest pause):', '');
    const phases = Object.keys(settled[0]!.settleGcs!) as (keyof SettleGcsByPhase)[];
    lines.push(`| subject | ${phases.join(' | ')} |`, `|---|${phases.map(() => '---:').join('|')}|`);
    for (const x of settled) lines.push(`| ${x.label} | ${phases.map((ph) => `${x.settleGcs![ph].count}${x.settleGcs![ph].count > 0 ? ` (${x.settleGcs![ph].maxPauseMs} ms)` : ''}`).join(' | ')} |`);
  }
  lines.push('');
  lines.push('| run | load average before | load average after |', '|---|---|---|');
  for (const x of r.runs) lines.push(`| ${x.label} | ${x.loadAverageBefore.map((l) => l.toFixed(2)).join(' ')} | ${x.loadAverageAfter.map((l) => l.toFixed(2)).join(' ')} |`);
  return lines.join('\n');
}
