import type { V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';
import type { ExitedContainer, ExitedPod } from './exited-containers.js';
import { wholeSeconds } from './pod-status-parts.js';
import { fromAPI, runtimeView, type ContainerRun, type TrackedPod } from './runtime-state.js';
import { ContainerRunsByName } from './container-runs-by-name.js';

/**
 * Taking over a pod after an agent restart. A real node's containers outlive the kubelet, and a
 * restarted kubelet finds them in its runtime; the simulated runtime lives in the agent's
 * process, so it rebuilds its record of the pod from the status the pod last had in the API
 * (StatusProvider.adopt): what it shows running keeps running with its ID, start time and
 * restart count, what it shows exited stays exited, and the pod keeps its start time and
 * (simulated-status-provider.ts) its address. Rendered again by running-status.ts, the record
 * gives back the status it was read from, so a restart writes nothing.
 */

/** An API time (a Date from the client, an RFC 3339 string off a watch) in wall ms. */
function ms(t: Date | string | undefined | null): number | undefined {
  if (t === undefined || t === null) return undefined;
  const v = new Date(t).getTime();
  return Number.isNaN(v) ? undefined : v;
}

function condition(status: V1PodStatus, type: string): V1PodCondition | undefined {
  return (status.conditions ?? []).find((c) => c.type === type);
}

/** A container status as the runtime's record, if it shows a container the runtime created. */
function adoptedRun(cs: V1ContainerStatus, now: number): ContainerRun | undefined {
  if (!cs.containerID) return undefined;
  const common = { restartCount: cs.restartCount ?? 0, crashLoop: undefined, timer: undefined, containerID: cs.containerID };
  const running = cs.state?.running;
  if (running) {
    return { ...common, state: 'running', startedAt: Math.min(ms(running.startedAt) ?? now, now), terminated: undefined, last: fromAPI(cs.lastState?.terminated) };
  }
  const terminated = fromAPI(cs.state?.terminated);
  if (terminated) return { ...common, state: 'exited', startedAt: terminated.startedAt, terminated, last: fromAPI(cs.lastState?.terminated) };
  // Waiting out a back-off: the instance that exited is lastState.
  const exited = cs.state?.waiting !== undefined ? fromAPI(cs.lastState?.terminated) : undefined;
  if (exited) return { ...common, state: 'waiting', startedAt: exited.startedAt, terminated: exited, last: undefined };
  return undefined;
}

/**
 * The runtime's record of `pod` as `published` shows it, or undefined when it shows no
 * container the runtime created (the pod had not started: it starts afresh). Init containers
 * are taken as far as they got; the containers only when every one of them had started (else
 * the initialization goes on from the init containers, container-runs.ts resumeAdopted).
 */
export function adoptedPod(pod: Pod, published: V1PodStatus, now: number): TrackedPod | undefined {
  const byName = (list: V1ContainerStatus[] | undefined) => new Map((list ?? []).map((cs) => [cs.name, cs]));
  const initStatuses = byName(published.initContainerStatuses);
  const statuses = byName(published.containerStatuses);
  const inits = new ContainerRunsByName();
  for (const c of pod.spec?.initContainers ?? []) {
    const cs = initStatuses.get(c.name);
    const run = cs === undefined ? undefined : adoptedRun(cs, now);
    if (run !== undefined) inits.set(c.name, run);
  }
  const containers = pod.spec?.containers ?? [];
  let runs: ContainerRunsByName | undefined = new ContainerRunsByName();
  for (const c of containers) {
    const cs = statuses.get(c.name);
    const run = cs === undefined ? undefined : adoptedRun(cs, now);
    if (run !== undefined) runs.set(c.name, run);
  }
  if (inits.size === 0 && runs.size === 0) return undefined;
  const started = [...inits.values(), ...runs.values()].map((r) => r.startedAt);
  if (runs.size < containers.length) runs = undefined;

  const acceptedAt = wholeSeconds(new Date(Math.min(ms(published.startTime) ?? now, now)));
  const sandbox = condition(published, 'PodReadyToStartContainers');
  const sandboxAt = sandbox?.status === 'True' ? ms(sandbox.lastTransitionTime) : undefined;
  const runningAt = Math.min(sandboxAt ?? Math.min(...started), now);
  const initialized = condition(published, 'Initialized');
  const initializedAt = runs === undefined ? undefined : initialized?.status === 'True' ? (ms(initialized.lastTransitionTime) ?? runningAt) : runningAt;
  // The runtime renders Ready's time as the last change after the start, or the start itself.
  const readyAt = ms(condition(published, 'Ready')?.lastTransitionTime);
  const changedAt = readyAt !== undefined && Math.floor(readyAt / 1000) !== Math.floor(runningAt / 1000) ? readyAt : undefined;
  return {
    acceptedAt,
    runningAt,
    timer: undefined,
    pod: runtimeView(pod),
    runs,
    inits,
    initializedAt,
    changedAt,
    stopping: undefined,
    stopped: false,
    previous: undefined,
  };
}

/**
 * The exited instances a status shows of a pod that was not running then (its containers
 * waiting for a new sandbox after a restart of its UID), to be continued as the runtime's kept
 * containers would be: counts go on and the phase stays that of a pod that has run.
 */
export function exitedOf(published: V1PodStatus): ExitedPod | undefined {
  const out = new Map<string, ExitedContainer>();
  for (const cs of [...(published.initContainerStatuses ?? []), ...(published.containerStatuses ?? [])]) {
    const terminated = cs.state?.terminated ?? cs.lastState?.terminated;
    if (terminated) out.set(cs.name, { restartCount: cs.restartCount ?? 0, terminated });
  }
  return out.size > 0 ? out : undefined;
}
