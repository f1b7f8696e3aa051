import { readinessFailedEvent } from './container-events.js';
import type { RuntimeContext } from './runtime-context.js';
import type { TrackedPod } from './runtime-state.js';

/**
 * Readiness that a scenario makes fail (`readiness`): a running container stays started but
 * not ready, so the pod's Ready and ContainersReady turn False (`ContainersNotReady`), as the
 * kubelet's prober reports a failing readiness probe. Without a period it fails from the start;
 * with one it flaps: ready for a period from the containers' start, unready for the next, and
 * so on. Each turn to unready reports the prober's `Unhealthy` Event (the kubelet reports one per
 * failed probe, every periodSeconds, which its recorder then counts as repeats).
 */
export function startReadiness(ctx: RuntimeContext, uid: string, tracked: TrackedPod, at: number): void {
  const readiness = tracked.plan?.readiness;
  if (readiness === undefined || readiness.size === 0) return;
  tracked.unready = new Set();
  tracked.probeTimers = new Map();
  for (const [name, probe] of readiness) {
    if (tracked.runs?.get(name) === undefined) continue;
    if (probe.periodMs === undefined) {
      tracked.unready.add(name);
      ctx.event(tracked.pod, name, readinessFailedEvent(probe.message));
    } else {
      flapAfter(ctx, uid, tracked, name, probe.periodMs, probe.message, at);
    }
  }
}

function flapAfter(ctx: RuntimeContext, uid: string, tracked: TrackedPod, name: string, periodMs: number, message: string, from: number): void {
  if (ctx.isStopped()) return;
  tracked.probeTimers?.set(
    name,
    ctx.clock.setTimeout(() => {
      tracked.probeTimers?.delete(name);
      if (!ctx.isCurrent(uid, tracked) || tracked.stopping !== undefined || tracked.unready === undefined) return;
      const now = from + periodMs;
      if (tracked.unready.has(name)) tracked.unready.delete(name);
      else {
        tracked.unready.add(name);
        ctx.event(tracked.pod, name, readinessFailedEvent(message));
      }
      tracked.changedAt = now;
      ctx.notify(uid);
      flapAfter(ctx, uid, tracked, name, periodMs, message, now);
    }, periodMs),
  );
}
