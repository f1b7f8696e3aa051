import { childLogger, type Logger } from '../logger.js';
import { getPodFullName, isStaticPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { podUID } from '../values/pod-format.js';
import type { Relist } from './relist.js';

/**
 * The kubelet's pod workers (`pkg/kubelet/pod_workers.go`) for a runtime that is simulated:
 * one state machine per pod UID, and the rule "one running static pod per full name".
 *
 * - `waiting`: created, not allowed to start yet (another static pod of its full name runs,
 *   or one that arrived before it waits too); its start is tried again after 10 s plus up to
 *   50 % jitter, as the kubelet re-queues a refused start (`backOffPeriod`);
 * - `syncing`: started; its mirror and status follow (the agent listens to `onStarted`);
 * - `terminating`: asked to stop, containers stopping within the effective grace period;
 * - `terminated`: containers stopped and the final status written; for a static pod this is
 *   when its orphaned mirror may go (see `isPodTerminatingByFullName`);
 * - `finished`: cleaned up; the full name is free for the next pod, and a pod whose UID came
 *   back while it was stopping (`restartRequested`) is started again by the next `syncKnownPods`.
 *
 * With a relist (the kubelet lifecycle) each worker takes one step at a time, as the kubelet's
 * podWorkerLoop does: a sync of a running pod, the termination, then the clean-up after it; and
 * each step first waits for a relist later than the end of the worker's previous step (the pod
 * cache's GetNewerThan). What asks for a step while one waits or runs waits for the next.
 */
export type PodWorkerState = 'waiting' | 'syncing' | 'terminating' | 'terminated' | 'finished';

/** What asked for a sync of a running pod: a relist found its containers changed, or the pod or its mirror changed. */
export type SyncReason = 'runtime' | 'update';

export interface PodWorkersOptions {
  /** Stops the pod's containers with the grace period; resolves once they have stopped. */
  terminate: (pod: Pod, gracePeriodSeconds: number) => Promise<void>;
  /** After the containers stopped and before the pod counts as terminated: write the final status. */
  afterStopped?: (pod: Pod) => Promise<void>;
  /** The pod may run now: its mirror and status follow. */
  onStarted?: (pod: Pod) => void;
  /** A pod that finished starts again with the same UID (after `restartRequested`). */
  onRestarted?: (pod: Pod) => void;
  /**
   * A finished pod that is no longer desired is forgotten: a later pod with its UID (an
   * identical manifest written again) starts from scratch, so its runtime state must go too.
   */
  onForgotten?: (pod: Pod) => void;
  /** Every state change (metrics, mirror housekeeping, tests). */
  onStateChange?: (pod: Pod, state: PodWorkerState) => void;
  /** A sync of a running pod (the kubelet's SyncPod), with what asked for it since the last one. */
  onSync?: (pod: Pod, reasons: ReadonlySet<SyncReason>) => void;
  /**
   * The relist the steps wait for (src/agent/relist.ts), under the kubelet lifecycle. Without
   * it every step runs at once.
   */
  relist?: Pick<Relist, 'whenNewerThan'>;
  /** The wait before a refused start is tried again: `backOffMs` plus up to `backOffJitter` of it; 10 s and 0.5. */
  backOffMs?: number;
  backOffJitter?: number;
  /** [0, 1) for the jitter; Math.random by default. */
  random?: () => number;
  clock?: Clock;
  logger?: Logger;
}

export interface KillOptions {
  /** A grace period that wins when smaller (eviction, node shutdown). */
  gracePeriodOverride?: number;
}

export interface WorkerCounts {
  /** By `${lifecycle}|${config}|${static}`: the labels of `kubelet_working_pods`. */
  working: Map<string, number>;
}

export interface PodWorkers {
  /**
   * A pod was created, updated or is to be killed. A create for a UID that is stopping marks
   * it for a restart once it has finished; a kill of a pod that never started finishes it at
   * once; a kill with a shorter grace period restarts a termination in progress.
   */
  updatePod(pod: Pod, kind: 'create' | 'update' | 'kill', options?: KillOptions): void;
  state(uid: string): PodWorkerState | undefined;
  /** The pod a worker runs, also once it left the pod manager (stopping pods). */
  podOf(uid: string): Pod | undefined;
  /** True while the pod exists and is not allowed to start yet. */
  isWaitingToStart(uid: string): boolean;
  /**
   * True while the pod runs (`syncing`): the kubelet's SyncPod, which alone creates and
   * replaces mirrors, runs only then. False before the start and once termination began
   * (removed, or completed).
   */
  isSyncing(uid: string): boolean;
  /**
   * The kubelet's IsPodForMirrorPodTerminatingByFullName: the static pod that holds the full
   * name has been asked to stop and has not finished stopping. Its orphaned mirror stays.
   */
  isPodTerminatingByFullName(podFullName: string): boolean;
  /**
   * Asks for a sync of a running pod (the kubelet's UpdatePod with SyncPodUpdate or SyncPodSync):
   * `onSync` runs at the worker's next step. Ignored unless the pod is `syncing`.
   */
  sync(uid: string, reason: SyncReason): void;
  /**
   * The kubelet's ShouldPodContentBeRemoved, which its container GC asks before removing a
   * pod's exited containers: true once no worker knows the UID, or its pod was deleted (an API
   * deletion, or let go as not desired) and has stopped.
   */
  shouldPodContentBeRemoved(uid: string): boolean;
  /** Pods whose workers started and have not finished: their statuses are still published. */
  startedPods(): Pod[];
  /**
   * The kubelet's SyncKnownPods from housekeeping: workers of pods not in `desired` that still
   * run are killed (a removal seen while sources were not ready), finished workers are
   * removed, and those with a restart requested start again if still desired. Returns the
   * pods restarted.
   */
  syncKnownPods(desired: ReadonlyMap<string, Pod>): { restarted: Pod[] };
  counts(desired: ReadonlyMap<string, Pod>): WorkerCounts;
  /** Cancels retry timers; stops no pod. */
  stop(): Promise<void>;
}

// The worker's yes/no facts, as bits of one number (see Worker).
const STARTED = 1;
const RESTART_REQUESTED = 2;
const DELETED = 4;
const STOPPING = 8;
const BUSY = 16;

/**
 * One pod's worker. A fleet holds one per pod, so its yes/no facts share one field (each
 * field weighs 8 bytes) and the full name is kept for static pods only, which need it for
 * "one running static pod per full name"; logs name other pods from their pod.
 */
class Worker {
  pod: Pod;
  /** The static pod's full name; undefined for any other pod. */
  readonly staticName: string | undefined;
  state: PodWorkerState = 'waiting';
  #flags = 0;
  /** The effective grace period once termination started; 0 before. */
  gracePeriod = 0;
  retry: ClockTimer | undefined = undefined;
  /** Bumped at every (re)start of termination: a superseded one is ignored when it ends. */
  termination = 0;
  /** When the worker's last step ended (monotonic ms); undefined before its first. */
  lastStepAt: number | undefined = undefined;
  /** What asked for the next sync of the running pod. */
  syncReasons: Set<SyncReason> | undefined = undefined;

  constructor(pod: Pod) {
    this.pod = pod;
    this.staticName = isStaticPod(pod) ? getPodFullName(pod) : undefined;
  }

  get static(): boolean {
    return this.staticName !== undefined;
  }

  /** For logs. */
  get fullName(): string {
    return this.staticName ?? getPodFullName(this.pod);
  }

  /** Ever started: its status and mirror were published. */
  get started(): boolean {
    return this.#has(STARTED);
  }
  set started(on: boolean) {
    this.#set(STARTED, on);
  }

  get restartRequested(): boolean {
    return this.#has(RESTART_REQUESTED);
  }
  set restartRequested(on: boolean) {
    this.#set(RESTART_REQUESTED, on);
  }

  /** Deleted in the API, or no longer desired when housekeeping found it running. */
  get deleted(): boolean {
    return this.#has(DELETED);
  }
  set deleted(on: boolean) {
    this.#set(DELETED, on);
  }

  /** The termination step has begun: a shorter grace period then restarts it. */
  get stopping(): boolean {
    return this.#has(STOPPING);
  }
  set stopping(on: boolean) {
    this.#set(STOPPING, on);
  }

  /** A step waits for its relist or runs: whatever asks meanwhile is for the next step. */
  get busy(): boolean {
    return this.#has(BUSY);
  }
  set busy(on: boolean) {
    this.#set(BUSY, on);
  }

  #has(bit: number): boolean {
    return (this.#flags & bit) !== 0;
  }

  #set(bit: number, on: boolean): void {
    this.#flags = on ? this.#flags | bit : this.#flags & ~bit;
  }
}

/**
 * `calculateEffectiveGracePeriod` of pod_workers.go: the current value (0 before termination)
 * can only decrease; the API's deletionGracePeriodSeconds and an override win when smaller;
 * without either, the pod's terminationGracePeriodSeconds; never below 1. `changed` is true
 * when a termination in progress must restart with the new value.
 */
export function effectiveGracePeriod(current: number, pod: Pod, override?: number): { gracePeriod: number; changed: boolean } {
  let grace = current;
  let overridden = false;
  for (const candidate of [pod.metadata?.deletionGracePeriodSeconds, override]) {
    if (candidate === undefined || candidate === null) continue;
    if (grace === 0 || candidate < grace) {
      grace = candidate;
      overridden = true;
    }
  }
  const spec = pod.spec?.terminationGracePeriodSeconds;
  if (!overridden && grace === 0 && spec !== undefined && spec !== null) grace = spec;
  if (grace < 1) grace = 1;
  return { gracePeriod: grace, changed: current !== 0 && current !== grace };
}

/** Every node's workers until its first pod: empty, read and never written. */
const NO_WORKERS: ReadonlyMap<string, unknown> = new Map();

export function createPodWorkers(options: PodWorkersOptions): PodWorkers {
  return new NodePodWorkers(options);
}

/**
 * A class rather than a closure per method: a fleet holds one per node, most of them without a
 * pod for long stretches, and an object whose methods live on its prototype costs a fraction of
 * a dozen closures and their context (docs/performance.md, "An empty node's pod machinery").
 */
class NodePodWorkers implements PodWorkers {
  readonly #options: PodWorkersOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  // Made at the first pod (NO_WORKERS until then, never written): a node without pods holds no table.
  #workers = NO_WORKERS as Map<string, Worker>;
  // Static pods only: made at the first, so that a node without any holds neither.
  #startedByFullName: Map<string, string> | undefined;
  #waitingByFullName: Map<string, string[]> | undefined;
  #stopped = false;

  constructor(options: PodWorkersOptions) {
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#log = childLogger(options.logger, { component: 'pod-workers' });
  }

  updatePod(pod: Pod, kind: 'create' | 'update' | 'kill', killOptions?: KillOptions): void {
    if (this.#stopped) return;
    if (kind === 'kill') this.#kill(pod, killOptions);
    else if (kind === 'create') this.#create(pod);
    else {
      const w = this.#workers.get(podUID(pod));
      if (w === undefined) this.#create(pod);
      else w.pod = pod;
    }
  }

  state(uid: string): PodWorkerState | undefined {
    return this.#workers.get(uid)?.state;
  }

  podOf(uid: string): Pod | undefined {
    return this.#workers.get(uid)?.pod;
  }

  isWaitingToStart(uid: string): boolean {
    return this.#workers.get(uid)?.state === 'waiting';
  }

  isSyncing(uid: string): boolean {
    return this.#workers.get(uid)?.state === 'syncing';
  }

  isPodTerminatingByFullName(podFullName: string): boolean {
    const uid = this.#startedByFullName?.get(podFullName);
    return uid !== undefined && this.#workers.get(uid)?.state === 'terminating';
  }

  sync(uid: string, reason: SyncReason): void {
    const w = this.#workers.get(uid);
    if (this.#stopped || w === undefined || w.state !== 'syncing') return;
    (w.syncReasons ??= new Set()).add(reason);
    this.#nextStep(uid, w);
  }

  shouldPodContentBeRemoved(uid: string): boolean {
    const w = this.#workers.get(uid);
    return w === undefined || (w.deleted && (w.state === 'terminated' || w.state === 'finished'));
  }

  startedPods(): Pod[] {
    const out: Pod[] = [];
    for (const w of this.#workers.values()) if (w.started && w.state !== 'finished') out.push(w.pod);
    return out;
  }

  syncKnownPods(desired: ReadonlyMap<string, Pod>): { restarted: Pod[] } {
    const restarted: Pod[] = [];
    for (const [uid, w] of [...this.#workers]) {
      const wanted = desired.get(uid);
      if (w.state === 'finished') {
        // A pod that finished while still desired (it completed: Succeeded or Failed) keeps
        // its worker, so that it is not started again; only a restart request starts it.
        if (wanted !== undefined && !w.restartRequested) continue;
        this.#workers.delete(uid);
        if (wanted === undefined) this.#options.onForgotten?.(w.pod);
        if (w.restartRequested && wanted !== undefined) {
          this.#log.info({ pod: w.fullName, podUID: uid }, 'restarting pod with the same UID');
          this.#create(wanted);
          const again = this.#workers.get(uid);
          if (again !== undefined) this.#options.onRestarted?.(again.pod);
          restarted.push(wanted);
        }
        continue;
      }
      if (wanted === undefined && (w.state === 'syncing' || w.state === 'waiting')) {
        // An orphan counts as deleted (removeTerminatedWorker).
        w.deleted = true;
        this.#kill(w.pod, undefined);
      }
    }
    return { restarted };
  }

  counts(desired: ReadonlyMap<string, Pod>): WorkerCounts {
    const working = new Map<string, number>();
    for (const [uid, w] of this.#workers) {
      if (w.state === 'waiting' || w.state === 'finished') continue;
      const lifecycle = w.state === 'syncing' ? 'sync' : w.state;
      const key = `${lifecycle}|${desired.has(uid) ? 'desired' : 'orphan'}|${w.static ? 'true' : ''}`;
      working.set(key, (working.get(key) ?? 0) + 1);
    }
    return { working };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const w of this.#workers.values()) this.#clock.clearTimeout(w.retry);
  }

  #setState(w: Worker, state: PodWorkerState): void {
    w.state = state;
    this.#options.onStateChange?.(w.pod, state);
  }

  /** allowStaticPodStart: the full name is free (or ours) and no earlier live UID waits. */
  #allowStart(uid: string, w: Worker): boolean {
    const name = w.staticName;
    if (name === undefined) return true;
    const started = (this.#startedByFullName ??= new Map<string, string>());
    const waiting = (this.#waitingByFullName ??= new Map<string, string[]>());
    const holder = started.get(name);
    if (holder !== undefined) return holder === uid;
    const queue = waiting.get(name) ?? [];
    const live = queue.filter((u) => this.#workers.get(u)?.state === 'waiting');
    if (live.length > 0 && live[0] !== uid) {
      waiting.set(name, live);
      return false;
    }
    const rest = live.filter((u) => u !== uid);
    if (rest.length > 0) waiting.set(name, rest);
    else waiting.delete(name);
    started.set(name, uid);
    return true;
  }

  #tryStart(uid: string, w: Worker): void {
    w.retry = undefined;
    if (this.#stopped || this.#workers.get(uid) !== w || w.state !== 'waiting') return;
    if (!this.#allowStart(uid, w)) {
      const backOffMs = this.#options.backOffMs ?? 10_000;
      const jitter = this.#options.backOffJitter ?? 0.5;
      const delay = backOffMs + backOffMs * jitter * (this.#options.random ?? Math.random)();
      this.#log.info({ pod: w.fullName, podUID: uid, retryMs: Math.round(delay) }, 'pod start refused: another pod of this full name runs');
      w.retry = this.#clock.setTimeout(() => this.#tryStart(uid, w), delay);
      return;
    }
    w.started = true;
    this.#setState(w, 'syncing');
    this.#log.info({ pod: w.fullName, podUID: uid }, 'pod started');
    this.#options.onStarted?.(w.pod);
    this.#holdFirstSync(uid, w);
  }

  // The kubelet's first SyncPod returns only once it has started the containers, so what
  // arrives meanwhile (the new mirror coming back through the watch) waits for the relist after
  // that. Our runtime starts a pod within a relist period (1 s by default), so the first sync
  // counts as ending at the first relist.
  #holdFirstSync(uid: string, w: Worker): void {
    const relist = this.#options.relist;
    if (relist === undefined) {
      w.lastStepAt = this.#clock.monotonic();
      return;
    }
    w.busy = true;
    relist.whenNewerThan(this.#clock.monotonic(), () => {
      if (!this.#stopped && this.#workers.get(uid) === w) this.#stepDone(uid, w);
    });
  }

  /** Starts the worker's next step, if it has one and none waits or runs. */
  #nextStep(uid: string, w: Worker): void {
    if (this.#stopped || w.busy || this.#workers.get(uid) !== w) return;
    let step: (() => void) | undefined;
    if (w.state === 'syncing' && w.syncReasons !== undefined) {
      const reasons = w.syncReasons;
      w.syncReasons = undefined;
      step = () => {
        // A kill that came while it waited cancels the sync (the kubelet cancels its context).
        if (w.state === 'syncing') this.#options.onSync?.(w.pod, reasons);
        this.#stepDone(uid, w);
      };
    } else if (w.state === 'terminating' && !w.stopping) {
      step = () => this.#startTermination(uid, w);
    } else if (w.state === 'terminated') {
      // SyncTerminatedPod has nothing to wait for here (no volumes, no cgroups).
      step = () => {
        this.#finish(uid, w);
        this.#stepDone(uid, w);
      };
    }
    if (step === undefined) return;
    w.busy = true;
    const run = (): void => {
      if (!this.#stopped && this.#workers.get(uid) === w) step();
    };
    const relist = this.#options.relist;
    if (relist === undefined || w.lastStepAt === undefined) run();
    else relist.whenNewerThan(w.lastStepAt, run);
  }

  #stepDone(uid: string, w: Worker): void {
    w.lastStepAt = this.#clock.monotonic();
    w.busy = false;
    this.#nextStep(uid, w);
  }

  #create(pod: Pod): void {
    const uid = podUID(pod);
    const existing = this.#workers.get(uid);
    if (existing !== undefined) {
      existing.pod = pod;
      if (existing.state === 'terminating' || existing.state === 'terminated' || existing.state === 'finished') {
        if (!existing.restartRequested) this.#log.info({ pod: existing.fullName, podUID: uid }, 'pod created again while stopping: restart requested');
        existing.restartRequested = true;
      }
      return;
    }
    const w = new Worker(pod);
    if (this.#workers === NO_WORKERS) this.#workers = new Map();
    this.#workers.set(uid, w);
    if (w.staticName !== undefined) {
      const waiting = (this.#waitingByFullName ??= new Map());
      waiting.set(w.staticName, [...(waiting.get(w.staticName) ?? []), uid]);
    }
    this.#tryStart(uid, w);
  }

  #kill(pod: Pod, killOptions: KillOptions | undefined): void {
    const uid = podUID(pod);
    const w = this.#workers.get(uid);
    if (w === undefined || w.state === 'terminated' || w.state === 'finished') return;
    if (w.state === 'waiting') {
      // Never started (cleanupUnstartedPod): nothing runs, nothing to stop.
      this.#clock.clearTimeout(w.retry);
      w.retry = undefined;
      this.#setState(w, 'finished');
      return;
    }
    if (pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) w.deleted = true;
    const { gracePeriod, changed } = effectiveGracePeriod(w.gracePeriod, pod, killOptions?.gracePeriodOverride);
    if (w.state === 'terminating' && !changed) return;
    w.gracePeriod = gracePeriod;
    if (w.state !== 'terminating') {
      w.syncReasons = undefined;
      this.#setState(w, 'terminating');
    }
    // Not begun yet: the termination step takes the new grace period when it comes.
    if (w.stopping) this.#startTermination(uid, w, changed);
    else this.#nextStep(uid, w);
  }

  /** The termination step (SyncTerminatingPod): stop the containers, write the final status. */
  #startTermination(uid: string, w: Worker, restarted = false): void {
    w.stopping = true;
    const termination = ++w.termination;
    const gracePeriod = w.gracePeriod;
    this.#log.info({ pod: w.fullName, podUID: uid, gracePeriod, restarted }, 'terminating pod');
    void (async () => {
      try {
        await this.#options.terminate(w.pod, gracePeriod);
        if (w.termination !== termination || this.#workers.get(uid) !== w) return;
        await this.#options.afterStopped?.(w.pod);
      } catch (err) {
        this.#log.warn({ pod: w.fullName, podUID: uid, err }, 'pod termination step failed');
      }
      if (w.termination !== termination || this.#workers.get(uid) !== w || w.state !== 'terminating') return;
      this.#setState(w, 'terminated');
      this.#log.info({ pod: w.fullName, podUID: uid }, 'pod terminated');
      this.#stepDone(uid, w);
    })();
  }

  #finish(uid: string, w: Worker): void {
    if (w.staticName !== undefined && this.#startedByFullName?.get(w.staticName) === uid) this.#startedByFullName.delete(w.staticName);
    this.#setState(w, 'finished');
  }
}
