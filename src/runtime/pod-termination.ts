import type { Pod } from '../pod/types.js';
import { isSidecar } from '../status/pod-phase.js';
import { killingEvent } from './container-events.js';
import { stopOutcome } from './container-lifecycle.js';
import type { RuntimeContext } from './runtime-context.js';
import { allRuns, type Stopping, type TrackedPod } from './runtime-state.js';
import { stopMsOf } from './simulation-annotations.js';

/**
 * Stopping a whole pod with its grace period, as the kubelet's killPod does: every running
 * container gets SIGTERM at once and exits after its stop time, or is killed at the end of its
 * budget (stopOutcome); a later call with a shorter grace period brings the end closer. The
 * contract is StatusProvider.terminate's.
 */

/** Stops a pod the runtime runs and is not stopped yet; resolves once every container stopped. */
export function stopPod(ctx: RuntimeContext, uid: string, tracked: TrackedPod, gracePeriodSeconds: number): Promise<void> {
  const pod = tracked.pod;
  const now = ctx.clock.now().getTime();
  const grace = Math.max(1, gracePeriodSeconds);
  const started = tracked.runningAt !== undefined && now >= tracked.runningAt;
  // Nothing to signal when every container has already exited for good (a completed pod).
  const running = started && allRuns(tracked).some((r) => r.state !== 'exited');
  // A pod that has not started has nothing to stop: its start is cancelled.
  // A scenario's slowStop ignores SIGTERM: the kill comes at the end of the budget.
  const stopMs = stopMsOf(pod, tracked.plan?.slowStop === true ? Infinity : ctx.node.stopMs);
  const outcome = running ? stopOutcome(stopMs, grace, preStopSleepOf(pod)) : { afterMs: 0, exitCode: 0, reason: 'Completed' };
  return new Promise<void>((resolve) => {
    const at = now + outcome.afterMs;
    let stopping = tracked.stopping;
    if (stopping === undefined) {
      stopping = { at, exitCode: outcome.exitCode, reason: outcome.reason, timer: undefined, waiters: [] };
      tracked.stopping = stopping;
      if (started) {
        logRunning(ctx, uid, tracked, now, (name) => `stopping container ${JSON.stringify(name)} (grace period ${grace}s)`);
        eachRunning(tracked, (name) => ctx.event(tracked.pod, name, killingEvent(name)));
      }
    } else if (at < stopping.at) {
      // A shorter grace period restarts the countdown: the kill comes sooner.
      ctx.clock.clearTimeout(stopping.timer);
      Object.assign(stopping, { at, exitCode: outcome.exitCode, reason: outcome.reason, timer: undefined });
    }
    stopping.waiters.push(resolve);
    if (stopping.timer !== undefined) return;
    if (!started) {
      if (tracked.timer !== undefined) ctx.clock.clearTimeout(tracked.timer);
      tracked.timer = undefined;
      tracked.runningAt = undefined;
    }
    const entry = stopping;
    entry.timer = ctx.clock.setTimeout(() => finishStop(ctx, uid, tracked, entry), Math.max(0, entry.at - now));
  });
}

function finishStop(ctx: RuntimeContext, uid: string, tracked: TrackedPod, stopping: Stopping): void {
  stopping.timer = undefined;
  if (!ctx.isCurrent(uid, tracked)) return;
  const now = ctx.clock.now().getTime();
  const verb = stopping.exitCode === 0 ? 'stopped' : 'killed';
  logRunning(ctx, uid, tracked, now, (name) => `container ${JSON.stringify(name)} ${verb} with code ${stopping.exitCode} (${stopping.reason})`);
  for (const run of allRuns(tracked)) {
    ctx.clock.clearTimeout(run.timer);
    run.timer = undefined;
    if (run.state === 'running') {
      run.terminated = { exitCode: stopping.exitCode, reason: stopping.reason, startedAt: run.startedAt, finishedAt: now };
      run.state = 'exited';
    } else if (run.state === 'waiting') {
      run.state = 'exited';
    }
  }
  tracked.changedAt = now;
  tracked.stopped = true;
  ctx.notify(uid);
  for (const resolve of stopping.waiters.splice(0)) resolve();
}

/** A line for each container running now: init containers and sidecars, then regular containers. */
function logRunning(ctx: RuntimeContext, uid: string, tracked: TrackedPod, at: number, line: (name: string) => string): void {
  eachRunning(tracked, (name) => ctx.log(uid, name, at, line(name)));
}

function eachRunning(tracked: TrackedPod, fn: (name: string) => void): void {
  for (const runs of [tracked.inits, tracked.runs]) for (const [name, run] of runs ?? []) if (run.state === 'running') fn(name);
}

/**
 * The longest preStop `sleep` hook of the pod's long-running containers (regular containers and
 * sidecars): the kubelet stops containers in parallel, so the pod stops with the slowest.
 * Other hook kinds run nothing here and take no time.
 */
function preStopSleepOf(pod: Pod): number {
  const containers = [...(pod.spec?.initContainers ?? []).filter(isSidecar), ...(pod.spec?.containers ?? [])];
  return Math.max(0, ...containers.map((c) => c.lifecycle?.preStop?.sleep?.seconds ?? 0));
}
