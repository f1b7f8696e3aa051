import { pullBackOffEvents, pullFailedEvents } from './container-events.js';
import type { RuntimeContext } from './runtime-context.js';
import type { TrackedPod } from './runtime-state.js';

/**
 * Containers whose image never pulls (a scenario's `imagePullFailure`), as the kubelet lives
 * them. Each pull fails and arms the image manager's back-off for that pod and image (a client-go
 * Backoff from 10 s doubling to 300 s: `imageBackOffPeriod` and `MaxImageBackOff` in
 * pkg/kubelet/kubelet.go); the pod worker syncs the pod again every 10 s after a failed sync
 * (its `backOffPeriod`, without the kubelet's jitter of up to 5 s), and each sync either finds
 * the back-off still running (`ImagePullBackOff`) or pulls again (`ErrImagePull`). So pulls come
 * at 0, 10, 30, 70, 150, 310 s and then every 300 s, with ImagePullBackOff in between. Reasons,
 * messages and Events are those of pkg/kubelet/images/image_manager.go and
 * kuberuntime/kuberuntime_container.go; the waiting state is the reason cache's
 * (kubelet_pods.go).
 */

export const IMAGE_PULL_BACKOFF_INITIAL_MS = 10_000;
export const IMAGE_PULL_BACKOFF_MAX_MS = 300_000;
/** The pod worker's retry after a sync that failed. */
export const SYNC_RETRY_MS = 10_000;

export interface FailingPull {
  readonly image: string;
  /** The runtime's error text. */
  readonly error: string;
  attempts: number;
  lastPullAt: number;
  backOffMs: number;
  reason: 'ErrImagePull' | 'ImagePullBackOff';
  message: string;
}

/** The containers' first pulls, as the sandbox comes up at `at`; the pod then retries on its own. */
export function startFailingPulls(ctx: RuntimeContext, uid: string, tracked: TrackedPod, at: number): void {
  const failures = tracked.plan?.pullFailures;
  if (failures === undefined || failures.size === 0) return;
  tracked.pulls = new Map();
  for (const c of tracked.pod.spec?.containers ?? []) {
    const error = failures.get(c.name);
    // A container taken over running (adopted-pods.ts) has its image.
    if (error === undefined || tracked.runs?.has(c.name) === true) continue;
    const pull: FailingPull = { image: c.image ?? '', error, attempts: 0, lastPullAt: at, backOffMs: 0, reason: 'ErrImagePull', message: error };
    tracked.pulls.set(c.name, pull);
    pullAgain(ctx, tracked, c.name, pull, at);
  }
  scheduleSync(ctx, uid, tracked);
}

function pullAgain(ctx: RuntimeContext, tracked: TrackedPod, name: string, pull: FailingPull, now: number): void {
  pull.attempts++;
  pull.backOffMs = pull.attempts === 1 ? IMAGE_PULL_BACKOFF_INITIAL_MS : Math.min(pull.backOffMs * 2, IMAGE_PULL_BACKOFF_MAX_MS);
  pull.lastPullAt = now;
  pull.reason = 'ErrImagePull';
  pull.message = pull.error;
  // No container exists, so nothing is logged: its log stays empty, as the kubelet's would.
  for (const e of pullFailedEvents(pull.image, pull.error)) ctx.event(tracked.pod, name, e);
}

function scheduleSync(ctx: RuntimeContext, uid: string, tracked: TrackedPod): void {
  if (ctx.isStopped()) return;
  tracked.pullTimer = ctx.clock.setTimeout(() => {
    tracked.pullTimer = undefined;
    if (!ctx.isCurrent(uid, tracked) || tracked.stopping !== undefined) return;
    syncPulls(ctx, tracked, ctx.clock.now().getTime());
    ctx.notify(uid);
    scheduleSync(ctx, uid, tracked);
  }, SYNC_RETRY_MS);
}

/** One sync of the pod: each failing pull still backing off says so, the others pull again. */
function syncPulls(ctx: RuntimeContext, tracked: TrackedPod, now: number): void {
  for (const [name, pull] of tracked.pulls ?? []) {
    if (now - pull.lastPullAt < pull.backOffMs) {
      pull.reason = 'ImagePullBackOff';
      // The back-off's message carries the last pull's error kind and text.
      pull.message = `Back-off pulling image ${JSON.stringify(pull.image)}: ErrImagePull: ${pull.error}`;
      for (const e of pullBackOffEvents(pull.image)) ctx.event(tracked.pod, name, e);
    } else {
      pullAgain(ctx, tracked, name, pull, now);
    }
  }
}
