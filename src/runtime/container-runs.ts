import { isSidecar } from '../status/pod-phase.js';
import { backOffEvent, missingClusterDNSEvent, sandboxChangedEvent } from './container-events.js';
import { crashLoopRestart, exitReason, shouldRestart, stopOutcome } from './container-lifecycle.js';
import type { RuntimeContext } from './runtime-context.js';
import { containerKind, continuedRun, NO_INIT_RUNS, type ContainerRun, type TrackedPod } from './runtime-state.js';
import { startFailingPulls } from './image-pulls.js';
import { startReadiness } from './readiness-probes.js';
import { plannedExits } from './scenario-plan.js';
import { stopMsOf, type PlannedExit } from './simulation-annotations.js';
import { ContainerRunsByName } from './container-runs-by-name.js';

/**
 * The life of a started pod's containers, as timers on the runtime's clock: init containers in
 * order, then the containers; planned and requested exits; restarts per the restart policy
 * with the kubelet's crash-loop back-off (container-lifecycle.ts). Stopping the whole pod is
 * pod-termination.ts's job.
 */

/** The sandbox is up: init containers run in order, then the containers start. */
export function startContainers(ctx: RuntimeContext, uid: string, tracked: TrackedPod, at: number): void {
  // The old sandbox is still there: the kubelet replaces it and says so.
  if (tracked.previous !== undefined) ctx.event(tracked.pod, undefined, sandboxChangedEvent());
  const dns = ctx.node.clusterDNS ? undefined : missingClusterDNSEvent(tracked.pod);
  if (dns !== undefined) ctx.event(tracked.pod, undefined, dns);
  tracked.inits = (tracked.pod.spec?.initContainers?.length ?? 0) > 0 ? new ContainerRunsByName() : NO_INIT_RUNS;
  runInits(ctx, uid, tracked, 0, at);
}

/**
 * Starts the init containers from index `from` on, as the kubelet's computeInitContainerActions
 * does: a sidecar starts and the next one follows at once (its startup is taken to succeed);
 * a regular init container without a planned exit completes at once (exit 0); one with a plan
 * runs until it exits, and only an exit 0 lets the next one start. Past the last, the
 * containers start.
 */
function runInits(ctx: RuntimeContext, uid: string, tracked: TrackedPod, from: number, at: number): void {
  const inits = tracked.pod.spec?.initContainers ?? [];
  const exits = plannedExits(tracked.pod, tracked.plan);
  for (let i = from; i < inits.length; i++) {
    const c = inits[i]!;
    ctx.containerStarts(tracked.pod, c);
    ctx.log(uid, c.name, at, `started container ${JSON.stringify(c.name)} (image ${c.image ?? ''})`);
    // A completed init container's older instance is removed once the new one exits: no lastState.
    const run = continuedRun(at, tracked.previous?.get(c.name), isSidecar(c));
    tracked.inits!.set(c.name, run);
    const plan = exits.get(c.name);
    if (isSidecar(c)) {
      scheduleExit(ctx, uid, tracked, c.name, run, plan);
      continue;
    }
    if (plan !== undefined) {
      scheduleExit(ctx, uid, tracked, c.name, run, plan);
      return;
    }
    complete(ctx, uid, c.name, run, at);
  }
  tracked.initializedAt = at;
  // A container whose image never pulls (a scenario's) is not started: image-pulls.ts.
  const failing = tracked.plan?.pullFailures;
  const starting = (tracked.pod.spec?.containers ?? []).filter((c) => failing?.has(c.name) !== true);
  for (const c of starting) {
    ctx.containerStarts(tracked.pod, c);
    ctx.log(uid, c.name, at, `started container ${JSON.stringify(c.name)} (image ${c.image ?? ''})`);
  }
  tracked.runs = new ContainerRunsByName();
  for (const c of starting) {
    const run = continuedRun(at, tracked.previous?.get(c.name), true);
    tracked.runs.set(c.name, run);
    scheduleExit(ctx, uid, tracked, c.name, run, exits.get(c.name));
  }
  startFailingPulls(ctx, uid, tracked, at);
  startReadiness(ctx, uid, tracked, at);
}

/** A regular init container that exits 0 at `at`. */
function complete(ctx: RuntimeContext, uid: string, name: string, run: ContainerRun, at: number): void {
  run.state = 'exited';
  run.terminated = { exitCode: 0, reason: 'Completed', startedAt: run.startedAt, finishedAt: at };
  ctx.log(uid, name, at, `container ${JSON.stringify(name)} exited with code 0 (Completed)`);
}

function scheduleExit(ctx: RuntimeContext, uid: string, tracked: TrackedPod, name: string, run: ContainerRun, plan: PlannedExit | undefined): void {
  if (plan === undefined || ctx.isStopped()) return;
  run.timer = ctx.clock.setTimeout(() => containerExited(ctx, uid, tracked, name, run, plan.exitCode, plan.reason), plan.afterMs);
}

/**
 * A running container exits with `exitCode` now (and `reason`, by the code by default): a
 * completed init container lets the next one start; otherwise it is restarted per the restart
 * policy, after its crash-loop back-off, or stays exited. Ignored once the pod is stopping,
 * forgotten, or the container is not running.
 */
export function containerExited(ctx: RuntimeContext, uid: string, tracked: TrackedPod, name: string, run: ContainerRun, exitCode: number, reason?: string): void {
  run.timer = undefined;
  if (!ctx.isCurrent(uid, tracked) || run.state !== 'running' || tracked.stopping !== undefined) return;
  const now = ctx.clock.now().getTime();
  const kind = containerKind(tracked.pod, name);
  if (kind === 'init' && exitCode === 0) {
    // Done: the next init container (or the containers) start now.
    tracked.changedAt = now;
    complete(ctx, uid, name, run, now);
    const index = (tracked.pod.spec?.initContainers ?? []).findIndex((c) => c.name === name);
    runInits(ctx, uid, tracked, index + 1, now);
    ctx.notify(uid);
    return;
  }
  run.terminated = { exitCode, reason: reason ?? exitReason(exitCode), startedAt: run.startedAt, finishedAt: now };
  tracked.changedAt = now;
  ctx.log(uid, name, now, `container ${JSON.stringify(name)} exited with code ${exitCode} (${run.terminated.reason})`);
  // A sidecar is restarted whatever the pod's policy; a failed init container is unless the
  // policy is Never, which fails the pod (the kubelet kills it: the sidecars stop too).
  const policy = kind === 'sidecar' ? 'Always' : tracked.pod.spec?.restartPolicy;
  if (!shouldRestart(policy, exitCode)) {
    run.state = 'exited';
    if (kind === 'init') stopSidecars(ctx, uid, tracked, now);
    ctx.notify(uid);
    return;
  }
  const { restartAt, next } = crashLoopRestart(run.crashLoop, now);
  run.crashLoop = next;
  if (restartAt <= now) restart(ctx, uid, tracked, name, run);
  else {
    run.state = 'waiting';
    ctx.event(tracked.pod, name, backOffEvent(tracked.pod, name));
    run.timer = ctx.clock.setTimeout(() => {
      run.timer = undefined;
      if (ctx.isCurrent(uid, tracked) && run.state === 'waiting' && tracked.stopping === undefined) restart(ctx, uid, tracked, name, run);
    }, restartAt - now);
  }
  ctx.notify(uid);
}

/** The pod failed in its init containers: its running sidecars are stopped with it, at once. */
function stopSidecars(ctx: RuntimeContext, uid: string, tracked: TrackedPod, now: number): void {
  const { exitCode, reason } = stopOutcome(stopMsOf(tracked.pod, ctx.node.stopMs), 0);
  for (const c of tracked.pod.spec?.initContainers ?? []) {
    const run = tracked.inits?.get(c.name);
    if (!isSidecar(c) || run === undefined || run.state === 'exited') continue;
    ctx.clock.clearTimeout(run.timer);
    run.timer = undefined;
    if (run.state === 'running') {
      run.terminated = { exitCode, reason, startedAt: run.startedAt, finishedAt: now };
      ctx.log(uid, c.name, now, `container ${JSON.stringify(c.name)} ${exitCode === 0 ? 'stopped' : 'killed'} with code ${exitCode} (${reason})`);
    }
    run.state = 'exited';
  }
}

function restart(ctx: RuntimeContext, uid: string, tracked: TrackedPod, name: string, run: ContainerRun): void {
  const now = ctx.clock.now().getTime();
  // A taken-over instance's ID stays with it in lastState; the new instance has one of ours.
  const last = run.terminated !== undefined && run.containerID !== undefined ? { containerID: run.containerID, ...run.terminated } : run.terminated;
  Object.assign(run, { state: 'running', restartCount: run.restartCount + 1, startedAt: now, last, terminated: undefined, containerID: undefined });
  tracked.changedAt = now;
  const spec = [...(tracked.pod.spec?.containers ?? []), ...(tracked.pod.spec?.initContainers ?? [])].find((c) => c.name === name);
  if (spec !== undefined) ctx.containerStarts(tracked.pod, spec);
  ctx.log(uid, name, now, `restarted container ${JSON.stringify(name)} (image ${spec?.image ?? ''}), restart ${run.restartCount}`);
  const plan = plannedExits(tracked.pod, tracked.plan).get(name);
  // An init container restarted without a planned exit completes at once.
  if (plan === undefined && containerKind(tracked.pod, name) === 'init') containerExited(ctx, uid, tracked, name, run, 0);
  else scheduleExit(ctx, uid, tracked, name, run, plan);
  ctx.notify(uid);
}

/**
 * A pod taken over from before an agent restart (adopted-pods.ts) goes on from where its
 * status left it: a planned exit keeps its time from the container's start; a container that
 * had exited and that its policy restarts, or that was backing off, is restarted now (the
 * back-off, like the kubelet's, lived in the old process); an initialization under way goes
 * on. A pod that had completed (`completed`) stays as it is.
 */
export function resumeAdopted(ctx: RuntimeContext, uid: string, tracked: TrackedPod, now: number, completed: boolean): void {
  if (completed) return;
  const exits = plannedExits(tracked.pod, tracked.plan);
  // A snapshot: restarting an init container may start the ones after it.
  const adopted = [...(tracked.inits ?? []), ...(tracked.runs ?? [])];
  for (const [name, run] of adopted) {
    if (run.state === 'running') {
      const plan = exits.get(name);
      if (plan !== undefined && !ctx.isStopped()) {
        run.timer = ctx.clock.setTimeout(() => containerExited(ctx, uid, tracked, name, run, plan.exitCode, plan.reason), Math.max(0, run.startedAt + plan.afterMs - now));
      }
      continue;
    }
    const kind = containerKind(tracked.pod, name);
    const exitCode = run.terminated?.exitCode ?? 0;
    if (run.state === 'exited' && kind === 'init' && exitCode === 0) continue;
    const policy = kind === 'sidecar' ? 'Always' : tracked.pod.spec?.restartPolicy;
    if (run.state === 'waiting' || shouldRestart(policy, exitCode)) restart(ctx, uid, tracked, name, run);
  }
  if (tracked.runs !== undefined) {
    // The scenarios' failing pulls and probes go on from now.
    startFailingPulls(ctx, uid, tracked, now);
    startReadiness(ctx, uid, tracked, now);
    return;
  }
  // Not initialized yet: the next init container starts once those before it are done.
  const inits = tracked.pod.spec?.initContainers ?? [];
  let next = 0;
  for (; next < inits.length; next++) {
    const c = inits[next]!;
    const run = tracked.inits?.get(c.name);
    if (run === undefined) break;
    const done = isSidecar(c) ? run.state === 'running' : run.state === 'exited' && run.terminated?.exitCode === 0;
    if (!done) return;
  }
  tracked.inits ??= new ContainerRunsByName();
  runInits(ctx, uid, tracked, next, now);
}
