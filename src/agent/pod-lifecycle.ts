import { PodOperation } from '../constants.js';
import type { PodAdmission } from '../admission/pod-admission.js';
import type { Logger } from '../logger.js';
import type { MirrorSync } from '../mirror/mirror-sync.js';
import { getPodFullName, isMirrorPod, isStaticPod, isTerminalPhase } from '../pod/classify.js';
import type { PodManager, PodsAndMirrorPods } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import type { AgentMetrics } from '../server/agent-metrics.js';
import type { MirrorStatusWriter } from '../status/mirror-status-writer.js';
import { createKeyedWorkQueue, type KeyedWorkQueue } from '../queue/keyed-work-queue.js';
import type { StatusProvider } from '../status/status-provider.js';
import type { Clock, ClockTimer } from '../time/clock.js';
import type { PodWorkers, PodWorkersOptions } from './pod-workers.js';

/**
 * The kubelet's sync-loop handler for one node: what happens to pods when the sources change
 * them (HandlePodAdditions/Updates/Removes), when the runtime finds them terminal, when a
 * deleted pod has stopped (the status manager's final delete), and every housekeeping period
 * (HandlePodCleanups). The composition root (agent.ts) only hands it its collaborators.
 */

/** How long a terminated pod waits for its final status write before it counts as terminated. */
const FINAL_STATUS_BOUND_MS = 10_000;

/** How soon a final DELETE that did not go through is sent again: the status manager's batch period. */
const FINAL_DELETE_RETRY_MS = 10_000;

/** The retry time of a pod whose final DELETE went through: never again. */
const DELETED = Number.NEGATIVE_INFINITY;

/** Every lifecycle's retries until its first final DELETE: empty, read and never written. */
const NO_RETRIES: ReadonlyMap<string, number> = new Map();

/** What the lifecycle asks of the pod workers. */
export type LifecycleWorkers = Pick<PodWorkers, 'updatePod' | 'sync' | 'state' | 'podOf' | 'isSyncing' | 'syncKnownPods' | 'counts'>;

export interface PodLifecycleOptions {
  podManager: Pick<PodManager, 'getPods' | 'getPodByUID' | 'getPodByFullName' | 'getPodsAndMirrorPods'>;
  admission: Pick<PodAdmission, 'admitNew' | 'forget' | 'rejection'>;
  sourcesReady: { allReady(): boolean };
  /**
   * The pod workers under `--simulated-lifecycle=kubelet`; undefined under `instant`. A getter:
   * the workers are made after the lifecycle, whose `workerHooks` they call.
   */
  workers: (() => LifecycleWorkers) | undefined;
  /** The runtime, as admission shows it. */
  runtime: Pick<StatusProvider, 'statusFor' | 'forget'>;
  /** Undefined when standalone, as the three below. */
  mirrorSync: Pick<MirrorSync, 'enqueue' | 'housekeeping' | 'housekeepingDue'> | undefined;
  statusWriter: Pick<MirrorStatusWriter, 'requestSync' | 'invalidate' | 'syncBatch'> | undefined;
  /** The DELETE the kubelet sends for a terminated pod: grace 0, UID precondition. */
  deletePod: ((podFullName: string, uid: string) => Promise<boolean>) | undefined;
  metrics: Pick<AgentMetrics, 'setWorkingPods' | 'setDesiredPods' | 'setActivePods' | 'setMirrorPods' | 'recordRestartedPod'>;
  clock: Clock;
  logger: Logger;
}

/** The hooks of the pod workers that belong to the lifecycle. */
export type LifecycleWorkerHooks = Required<Pick<PodWorkersOptions, 'afterStopped' | 'onStarted' | 'onSync' | 'onStateChange' | 'onForgotten' | 'onRestarted'>>;

export interface PodLifecycle {
  /** An update the dispatcher applied to the pod manager (the pods it carried, static and mirror alike). */
  onPodsChanged(pods: readonly Pod[], op: PodOperation): void;
  /**
   * One housekeeping pass (every 2 s), skipped when nothing it reads has changed; final DELETEs
   * that did not go through are sent again from here.
   */
  housekeeping(): void;
  /** The runtime reported a change of this pod: a running pod whose phase is terminal is killed. */
  checkTerminal(uid: string): void;
  /**
   * A relist found these pods' containers changed (the PLEG's events): a running pod is synced
   * by its worker, a stopping one has its status written.
   */
  onRelist(uids: readonly string[]): void;
  /** A deleted ordinary pod that has terminated is deleted for good (its DELETE queued). */
  finishDeletion(pod: Pod): void;
  /** Final DELETEs not sent yet are dropped (the one in flight finishes). */
  stop(): void;
  /** The hooks for the pod workers' options: a new set at each read, so read once. */
  readonly workerHooks: LifecycleWorkerHooks;
}

export function createPodLifecycle(options: PodLifecycleOptions): PodLifecycle {
  return new NodePodLifecycle(options);
}

const uidOf = (pod: Pod): string => pod.metadata?.uid ?? '';

/**
 * A class rather than a closure per function: a fleet holds one per node, most of them without
 * a pod for long stretches (docs/performance.md, "An empty node's pod machinery").
 */
class NodePodLifecycle implements PodLifecycle {
  readonly #o: PodLifecycleOptions;
  // Counts the workers' state changes: one of the inputs housekeeping watches (see there).
  #workerChanges = 0;
  // What the last housekeeping pass saw: the pod manager's snapshot (a new object after every
  // change), the workers' change count and the sources' readiness.
  #housekeptPods: PodsAndMirrorPods | undefined;
  #housekeptWorkerChanges = -1;
  #housekeptReady = false;
  // Deleted pods whose final DELETE did not go through, with when to send it again (Infinity
  // while one is in flight, DELETED once one went through: until the watch shows the pod gone,
  // a late update of it, such as the API server's own grace-0 update before it removes the pod,
  // must not send another, as the kubelet's status manager forgets a pod once deleted).
  // Made at its first entry (NO_RETRIES until then, which is never written).
  #finalDeleteRetries = NO_RETRIES as Map<string, number>;
  // Final DELETEs by pod UID, one in flight at a time, as the kubelet's status manager sends its
  // requests from one loop. Sent all at once, a node's hundred deletions outran what a loaded
  // API server answers within the client's deadline, and every DELETE that timed out was sent
  // again (docs/fleet.md, "At scale"). A pass is always done: a DELETE that did not go through
  // is sent again on the status manager's 10 s cadence (#finalDeleteRetries), not the queue's backoff.
  // Made at the first final DELETE: a fleet node that never deletes a pod holds no queue.
  #finalDeletes: KeyedWorkQueue<string> | undefined;

  constructor(options: PodLifecycleOptions) {
    this.#o = options;
  }

  onPodsChanged(pods: readonly Pod[], op: PodOperation): void {
    const { admission, statusWriter } = this.#o;
    if (op === PodOperation.ADD) admission.admitNew(pods);
    else if (op === PodOperation.REMOVE) admission.forget(pods);
    const workers = this.#o.workers?.();
    if (workers !== undefined) this.#updateWorkers(workers, pods, op);
    if (this.#finalDeleteRetries.size > 0 && op !== PodOperation.REMOVE) this.#deleteNowTerminal(pods);
    // Status-only changes (often our own status writes coming back) need no mirror work.
    if (op !== PodOperation.RECONCILE) for (const pod of pods) this.#mirrorWork(workers, pod, op);
    // The writer also forgets (in itself and the provider) static pods that are gone.
    statusWriter?.requestSync(pods);
  }

  onRelist(uids: readonly string[]): void {
    const workers = this.#o.workers?.();
    if (workers === undefined) return;
    for (const uid of uids) {
      const state = workers.state(uid);
      if (state === 'syncing') workers.sync(uid, 'runtime');
      // A stopping pod's steps are shown as the relist sees them; its worker is busy stopping it.
      else if (state === 'terminating' || state === 'terminated') this.#o.statusWriter?.invalidate(uid);
    }
  }

  stop(): void {
    // A stopped queue takes no more final DELETEs; one not made yet is made stopped.
    void this.#finalDeleteQueue().stop();
  }

  housekeeping(): void {
    const { podManager, admission, sourcesReady, mirrorSync, metrics } = this.#o;
    // A pass reads only the pod manager, the workers' states, admission (which changes with
    // the pod manager) and the sources' readiness, and a second pass over the same inputs
    // changes nothing; so with none of them changed the pass is skipped, unless mirror
    // housekeeping still waits on a deletion. At fleet scale the skipped passes were a large
    // share of the idle allocation (docs/performance.md, "Notes moved from code comments").
    if (this.#finalDeleteRetries.size > 0) this.#retryFinalDeletes();
    const snapshot = podManager.getPodsAndMirrorPods();
    const ready = sourcesReady.allReady();
    const unchanged = snapshot === this.#housekeptPods && this.#workerChanges === this.#housekeptWorkerChanges && ready === this.#housekeptReady;
    if (unchanged && !(mirrorSync?.housekeepingDue() ?? false)) return;
    this.#housekeptPods = snapshot;
    this.#housekeptWorkerChanges = this.#workerChanges;
    this.#housekeptReady = ready;
    const workers = this.#o.workers?.();
    if (workers !== undefined && ready) {
      const desired = new Map<string, Pod>();
      for (const pod of podManager.getPods()) if (admission.rejection(uidOf(pod)) === undefined) desired.set(uidOf(pod), pod);
      workers.syncKnownPods(desired);
      metrics.setWorkingPods(workers.counts(desired).working);
    }
    mirrorSync?.housekeeping();
    const { pods, mirrorPods } = snapshot;
    let staticCount = 0;
    for (const pod of pods) if (isStaticPod(pod)) staticCount++;
    metrics.setDesiredPods({ static: staticCount, nonStatic: pods.length - staticCount });
    let activeStatic = 0;
    for (const pod of pods) if (isStaticPod(pod) && admission.rejection(uidOf(pod)) === undefined && workers?.state(uidOf(pod)) !== 'finished') activeStatic++;
    let activeOther = 0;
    for (const pod of pods) {
      const state = workers?.state(uidOf(pod));
      if (!isStaticPod(pod) && state !== undefined && state !== 'finished') activeOther++;
    }
    metrics.setActivePods({ static: activeStatic, nonStatic: activeOther });
    metrics.setMirrorPods(mirrorPods.length);
  }

  // A getter, not a field: the agent spreads the hooks into its pod workers' options, so the
  // object that carried them need not stay.
  get workerHooks(): LifecycleWorkerHooks {
    const { statusWriter, mirrorSync, runtime, metrics, clock } = this.#o;
    return {
      // The final status reaches the mirror before the pod counts as terminated, which is
      // what lets housekeeping delete the mirror.
      afterStopped: async (pod) => {
        if (statusWriter === undefined) return;
        statusWriter.invalidate(uidOf(pod));
        // Bounded: an API server that does not answer must not keep the pod terminating
        // (and its mirror in place) for ever; the writer retries the status on its own.
        let limit: ClockTimer | undefined;
        await Promise.race([
          statusWriter.syncBatch(false),
          new Promise<void>((resolve) => {
            limit = clock.setTimeout(resolve, FINAL_STATUS_BOUND_MS);
          }),
        ]);
        clock.clearTimeout(limit);
      },
      onStarted: (pod) => {
        statusWriter?.invalidate(uidOf(pod));
        mirrorSync?.enqueue(getPodFullName(pod));
      },
      // SyncPod: the status as the runtime has it now (SetPodStatus), the mirror checked, and a
      // pod whose containers all completed found terminal.
      onSync: (pod) => {
        statusWriter?.invalidate(uidOf(pod));
        if (isStaticPod(pod)) mirrorSync?.enqueue(getPodFullName(pod));
        this.checkTerminal(uidOf(pod));
      },
      // The status manager deletes a deleted pod once SyncTerminatedPod is done with it.
      onStateChange: (pod, state) => {
        this.#workerChanges++;
        if (state === 'finished' && !isStaticPod(pod)) this.finishDeletion(pod);
      },
      onForgotten: (pod) => runtime.forget?.(uidOf(pod)),
      onRestarted: (pod) => {
        metrics.recordRestartedPod(isStaticPod(pod));
        runtime.forget?.(uidOf(pod));
      },
    };
  }

  // SyncPod of a pod whose containers all completed (phase Succeeded or Failed) returns
  // "terminal": the pod worker terminates the pod and it is never synced again, so a mirror a
  // user deletes afterwards is not recreated (kubernetes issue 116483; docs/lifecycle.md).
  checkTerminal(uid: string): void {
    if (this.#o.workers === undefined) return;
    const workers = this.#o.workers();
    if (!workers.isSyncing(uid)) return;
    const pod = workers.podOf(uid);
    if (pod === undefined) return;
    if (isTerminalPhase(this.#o.runtime.statusFor(pod, this.#o.clock.now()).phase)) workers.updatePod(pod, 'kill');
  }

  // The kubelet's status manager, once a deleted pod has terminated and the API server holds
  // its terminal status: delete it for good, grace 0, with its UID as precondition. Until the
  // watch shows that status (its write may have failed, or still wait in the writer's queue)
  // the DELETE waits, as canBeDeleted makes it; the status stays published meanwhile
  // (publishedPods) and is written again by the writer's next batches. A DELETE that does not
  // go through (a timeout, a 5xx) is sent again while the pod is still there, as the status
  // manager does at each sync of its batch; otherwise the pod would stay Terminating for good.
  finishDeletion(pod: Pod): void {
    const uid = uidOf(pod);
    const current = this.#podStillDeleted(uid);
    if (current === undefined) return;
    if (!isTerminalPhase(current.status?.phase)) {
      // The status's echo brings it back at once (onPodsChanged), housekeeping in 10 s at the latest.
      this.#retriesToWrite().set(uid, this.#o.clock.monotonic() + FINAL_DELETE_RETRY_MS);
      return;
    }
    this.#retriesToWrite().set(uid, Infinity);
    this.#finalDeleteQueue().enqueue(uid);
  }

  #retriesToWrite(): Map<string, number> {
    return this.#finalDeleteRetries === NO_RETRIES ? (this.#finalDeleteRetries = new Map()) : this.#finalDeleteRetries;
  }

  #finalDeleteQueue(): KeyedWorkQueue<string> {
    return (this.#finalDeletes ??= createKeyedWorkQueue<string>({
      process: async (uid) => {
        await this.#sendFinalDelete(uid);
        return true;
      },
      clock: this.#o.clock,
      schedule: (start) => start(),
    }));
  }

  // Deleted in the API and no final DELETE pending for it yet.
  #finalDeleteDue(pod: Pod, uid: string): boolean {
    return Boolean(pod.metadata?.deletionTimestamp) && !this.#finalDeleteRetries.has(uid);
  }

  // Rejected pods never run (the kubelet's rejectPod): their Failed status is published as is.
  #updateWorkers(w: LifecycleWorkers, pods: readonly Pod[], op: PodOperation): void {
    const { admission, sourcesReady } = this.#o;
    for (const pod of pods) {
      if (isMirrorPod(pod)) continue;
      const uid = uidOf(pod);
      if (!isStaticPod(pod)) {
        this.#updateApiPodWorker(w, pod, uid, op);
        continue;
      }
      if (op === PodOperation.ADD) {
        if (admission.rejection(uid) === undefined) w.updatePod(pod, 'create');
      } else if (op === PodOperation.UPDATE || op === PodOperation.RECONCILE) {
        w.updatePod(pod, 'update');
      } else if (op === PodOperation.REMOVE) {
        // HandlePodRemoves: nothing while sources are not ready; housekeeping kills it later.
        if (sourcesReady.allReady()) w.updatePod(pod, 'kill');
      }
    }
  }

  // An ordinary pod bound to this node (API source): run as the kubelet runs it; a
  // deletionTimestamp is a kill with the deletion's grace period (HandlePodUpdates), a pod gone
  // from the API a kill too (HandlePodRemoves). Pods already terminal are not run.
  #updateApiPodWorker(w: LifecycleWorkers, pod: Pod, uid: string, op: PodOperation): void {
    if (op === PodOperation.REMOVE) {
      if (this.#o.sourcesReady.allReady()) w.updatePod(pod, 'kill');
      return;
    }
    if (this.#o.admission.rejection(uid) !== undefined) return;
    const state = w.state(uid);
    if (state === undefined && isTerminalPhase(pod.status?.phase)) {
      // Terminal and deleted, not yet gone (an agent stopped between the final status and the
      // DELETE): the DELETE is still due, as the kubelet's restarted status manager sends it.
      if (this.#finalDeleteDue(pod, uid)) this.finishDeletion(pod);
      return;
    }
    // Deleted after its worker finished (a completed pod): nothing to stop, the final DELETE is due.
    if (state === 'finished' && this.#finalDeleteDue(pod, uid)) {
      w.updatePod(pod, 'update');
      this.finishDeletion(pod);
      return;
    }
    w.updatePod(pod, state === undefined ? 'create' : 'update');
    if (pod.metadata?.deletionTimestamp) w.updatePod(pod, 'kill');
  }

  // A running pod's mirror is the business of its worker's next sync, as the kubelet's SyncPod
  // reconciles it (HandlePodUpdates and handleMirrorPod ask the worker for a sync); the pod's
  // own ADD is its first sync. Anything else (the instant lifecycle, pods not running, orphans)
  // goes to mirror sync at once.
  #mirrorWork(workers: LifecycleWorkers | undefined, pod: Pod, op: PodOperation): void {
    const name = getPodFullName(pod);
    const owner = isMirrorPod(pod) ? this.#o.podManager.getPodByFullName(name) : pod;
    const uid = owner === undefined ? '' : uidOf(owner);
    if (workers !== undefined && uid !== '' && workers.isSyncing(uid)) {
      if (isMirrorPod(pod) || op !== PodOperation.ADD) workers.sync(uid, 'update');
      return;
    }
    this.#o.mirrorSync?.enqueue(name);
  }

  // The pod manager's copy of a pod still deleted in the API (and an API to delete it through);
  // otherwise there is nothing left to send for it.
  #podStillDeleted(uid: string): Pod | undefined {
    const current = this.#o.podManager.getPodByUID(uid);
    if (current !== undefined && current.metadata?.deletionTimestamp && this.#o.deletePod !== undefined) return current;
    this.#finalDeleteRetries.delete(uid);
    return undefined;
  }

  // The pod may have gone (or come back undeleted) while its DELETE waited in the queue.
  async #sendFinalDelete(uid: string): Promise<void> {
    const current = this.#podStillDeleted(uid);
    const deletePod = this.#o.deletePod;
    if (current === undefined || deletePod === undefined) return;
    const deleted = await deletePod(getPodFullName(current), uid).catch(() => false);
    this.#o.logger.info({ pod: getPodFullName(current), podUID: uid, deleted }, 'deleted terminated pod');
    this.#retriesToWrite().set(uid, deleted ? DELETED : this.#o.clock.monotonic() + FINAL_DELETE_RETRY_MS);
  }

  // A refused DELETE (404: already gone; 409: the name is another pod's now) also counts as not
  // gone through: the retry finds the pod gone from the pod manager once the watch says so.
  #retryFinalDeletes(): void {
    const now = this.#o.clock.monotonic();
    for (const [uid, at] of this.#finalDeleteRetries) {
      if (now < at) continue;
      const pod = this.#o.podManager.getPodByUID(uid);
      if (pod === undefined) this.#finalDeleteRetries.delete(uid);
      else if (at !== DELETED) this.finishDeletion(pod);
    }
  }

  // A pod whose final DELETE waits for its terminal status (a finite retry time: none in flight,
  // none gone through): the update may be that status.
  #deleteNowTerminal(pods: readonly Pod[]): void {
    for (const pod of pods) {
      const at = this.#finalDeleteRetries.get(uidOf(pod));
      if (at !== undefined && Number.isFinite(at) && isTerminalPhase(pod.status?.phase)) this.finishDeletion(pod);
    }
  }
}

/**
 * The pods whose statuses the writer publishes under the kubelet lifecycle: those the pod
 * manager holds, except a pod waiting to start (no status yet) and a static pod that has
 * finished, plus removed pods still stopping (a static pod's mirror shows it stopping). An
 * ordinary pod that has finished stays published while the pod manager holds it, as the
 * kubelet's status manager keeps its status until the pod is gone: a terminal status whose
 * write failed is written again, and the final DELETE waits for it (finishDeletion). `workers`
 * is a getter for the same reason as in PodLifecycleOptions.
 */
export function publishedPods(
  podManager: Pick<PodManager, 'getPods' | 'getPodByUID'>,
  workers: () => Pick<PodWorkers, 'state' | 'startedPods' | 'podOf'>,
  isRejected: (uid: string) => boolean,
): { list(): Pod[]; byUID(uid: string): Pod | undefined } {
  // A pod without a worker is a rejected one (or, for an ordinary pod, one already terminal when
  // it arrived): a rejected pod's Failed status is published, a terminal one's left alone.
  const publishable = (pod: Pod, held: boolean): boolean => {
    const uid = pod.metadata?.uid ?? '';
    const state = workers().state(uid);
    if (state === undefined) return isStaticPod(pod) || isRejected(uid);
    if (state === 'finished') return held && !isStaticPod(pod);
    return state !== 'waiting';
  };
  return {
    list() {
      const out: Pod[] = [];
      for (const pod of podManager.getPods()) if (publishable(pod, true)) out.push(pod);
      // A started pod the pod manager holds was looked at above: publishable without being held
      // only if it was with (held counts only for a finished pod), so no set of what was taken.
      for (const pod of workers().startedPods()) {
        const uid = pod.metadata?.uid ?? '';
        if (podManager.getPodByUID(uid) === undefined && publishable(pod, false)) out.push(pod);
      }
      return out;
    },
    byUID(uid) {
      const held = podManager.getPodByUID(uid);
      const pod = held ?? workers().podOf(uid);
      return pod !== undefined && publishable(pod, held !== undefined) ? pod : undefined;
    },
  };
}
