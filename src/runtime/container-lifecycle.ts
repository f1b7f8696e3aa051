import { createHash } from 'node:crypto';

/**
 * The kubelet's rules for one container's life, as pure functions of times and counts, so that
 * the simulated runtime and its tests share them:
 *
 * - restarts follow the pod's `restartPolicy` (`Always` by default; `OnFailure` only after a
 *   non-zero exit; `Never` never);
 * - the crash-loop backoff of `pkg/kubelet/kubelet.go` (`crashLoopBackOff`, a client-go
 *   `flowcontrol.Backoff` from 10 s to 300 s whose entry expires once a container ran for more
 *   than 600 s): the first restart is at once and arms 10 s; each later exit waits the armed
 *   delay after the exit, and the restart doubles it, up to 5 min;
 * - the kill budget of `pkg/kubelet/kuberuntime/kuberuntime_container.go` (`killContainer`):
 *   the grace period, but at least `minimumGracePeriodInSeconds` = 2 s after SIGTERM.
 */

export const CRASH_LOOP_INITIAL_MS = 10_000;
export const CRASH_LOOP_MAX_MS = 300_000;
/** A container that ran longer than this before exiting starts again at once (backoff reset). */
export const CRASH_LOOP_RESET_MS = 600_000;
/** The runtime's floor after SIGTERM, whatever the pod's grace period. */
export const MIN_KILL_GRACE_SECONDS = 2;

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export function shouldRestart(policy: string | undefined, exitCode: number): boolean {
  if (policy === 'Never') return false;
  if (policy === 'OnFailure') return exitCode !== 0;
  return true;
}

/** The crash-loop backoff entry of one container: the armed delay and when it was last armed. */
export interface CrashLoopEntry {
  readonly delayMs: number;
  readonly armedAt: number;
}

/**
 * When a container that exited at `finishedAt` starts again, and the entry after that restart.
 * `entry` is undefined before the first restart.
 */
export function crashLoopRestart(entry: CrashLoopEntry | undefined, finishedAt: number): { restartAt: number; next: CrashLoopEntry } {
  const expired = entry !== undefined && finishedAt - entry.armedAt > CRASH_LOOP_RESET_MS;
  if (entry === undefined || expired) return { restartAt: finishedAt, next: { delayMs: CRASH_LOOP_INITIAL_MS, armedAt: finishedAt } };
  const restartAt = finishedAt + entry.delayMs;
  return { restartAt, next: { delayMs: Math.min(entry.delayMs * 2, CRASH_LOOP_MAX_MS), armedAt: restartAt } };
}

/**
 * How long a container takes to stop, and how. A preStop `sleep` hook runs first, cut at the
 * grace period, and the whole seconds it took come off the grace period (killContainer); then
 * SIGTERM: the container exits by itself after `stopMs` (code 0, `Completed`) if that is within
 * its budget of max(what is left, 2 s); otherwise it is killed at the end of the budget (code
 * 137, `Error`).
 */
export function stopOutcome(stopMs: number, gracePeriodSeconds: number, preStopSleepSeconds = 0): { afterMs: number; exitCode: number; reason: string } {
  const hookSeconds = Math.min(Math.max(0, preStopSleepSeconds), gracePeriodSeconds);
  const budgetMs = Math.max(gracePeriodSeconds - Math.floor(hookSeconds), MIN_KILL_GRACE_SECONDS) * 1000;
  const hookMs = hookSeconds * 1000;
  if (stopMs <= budgetMs) return { afterMs: hookMs + Math.max(0, stopMs), exitCode: 0, reason: 'Completed' };
  return { afterMs: hookMs + budgetMs, exitCode: 137, reason: 'Error' };
}

/** The reason a runtime reports for a container that exited by itself with `exitCode`. */
export function exitReason(exitCode: number): string {
  return exitCode === 0 ? 'Completed' : 'Error';
}

/** A fraction in [0, 1) fixed by the pod's UID: the same pod gets the same jitter in every run. */
export function podJitterFraction(uid: string): number {
  return createHash('sha256').update(uid).digest().readUInt32BE(0) / 2 ** 32;
}
