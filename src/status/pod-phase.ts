import type { V1Container, V1ContainerStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';

/**
 * The kubelet's pod phase and Initialized condition, read off the container statuses it
 * generated (`getPhase` in kubelet_pods.go, `GeneratePodInitializedCondition` in
 * status/generate.go, v1.34, with the ContainerRestartRules gate off as it is by default), so
 * that the simulated runtime derives them exactly as the kubelet does from whatever its
 * containers are doing.
 */

export const isSidecar = (c: V1Container): boolean => c.restartPolicy === 'Always';

const byName = (statuses: readonly V1ContainerStatus[], name: string): V1ContainerStatus | undefined => statuses.find((s) => s.name === name);

/**
 * The phase: Failed once a regular init container failed under restartPolicy Never; Pending
 * while a regular init container has not completed (or a sidecar has not started, before the
 * pod was first initialized) or a container waits for its first start; Running while one runs;
 * once all have stopped, by the restart policy (`podIsTerminal`: the kubelet stopped the pod,
 * which makes an ordinary pod Succeeded or Failed whatever its policy; a static pod keeps the
 * policy's answer, kubernetes issue 116484).
 */
export function kubeletPodPhase(
  pod: Pod,
  initStatuses: readonly V1ContainerStatus[],
  statuses: readonly V1ContainerStatus[],
  podIsTerminal: boolean,
  podHasInitialized: boolean,
  isStatic: boolean,
): string {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  let pendingInits = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of pod.spec?.initContainers ?? []) {
    const s = byName(initStatuses, c.name);
    if (isSidecar(c)) {
      if (s === undefined) {
        unknown++;
      } else if (s.state?.running) {
        if (s.started !== true) pendingSidecars++;
        running++;
      } else if (s.state?.waiting && !s.lastState?.terminated) {
        pendingSidecars++;
        waiting++;
      } else if (!s.state?.terminated && !s.state?.waiting) {
        pendingSidecars++;
        unknown++;
      }
      continue;
    }
    const exited = s?.state?.terminated ?? (s?.state?.waiting ? s.lastState?.terminated : undefined);
    if (s === undefined || s.state?.running || exited === undefined) pendingInits++;
    else if (exited.exitCode !== 0) failedInit++;
  }
  for (const c of pod.spec?.containers ?? []) {
    const s = byName(statuses, c.name);
    if (s === undefined) unknown++;
    else if (s.state?.running) running++;
    else if (s.state?.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.state?.waiting) {
      if (s.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (pendingInits > 0 || (pendingSidecars > 0 && !podHasInitialized) || waiting > 0) return 'Pending';
  if (running > 0 && unknown === 0) return 'Running';
  if (running === 0 && stopped > 0 && unknown === 0) {
    if (podIsTerminal && !isStatic) return stopped === succeeded ? 'Succeeded' : 'Failed';
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

/**
 * The Initialized condition's status, reason and message: True with PodCompleted for a pod
 * that succeeded; True once any regular container has started (a sidecar restarting later
 * does not undo it); else False while a regular init container is not ready (not completed
 * with 0) or a sidecar has not started, naming them.
 */
export function initializedCondition(
  pod: Pod,
  initStatuses: readonly V1ContainerStatus[],
  statuses: readonly V1ContainerStatus[],
  phase: string,
): { status: 'True' | 'False'; reason?: string; message?: string } {
  if (phase === 'Succeeded') return { status: 'True', reason: 'PodCompleted' };
  if (statuses.some((s) => s.state?.running !== undefined || s.state?.terminated !== undefined)) return { status: 'True' };
  const incomplete = (pod.spec?.initContainers ?? []).filter((c) => {
    const s = byName(initStatuses, c.name);
    return s === undefined || (isSidecar(c) ? s.started !== true : s.ready !== true);
  });
  if (incomplete.length === 0) return { status: 'True' };
  return { status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${incomplete.map((c) => c.name).join(' ')}]` };
}
