import type { V1Container, V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import { formatDuration } from '../values/go-duration.js';
import { isStaticPod, isTerminalPhase } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { initializedCondition, isSidecar, kubeletPodPhase } from '../status/pod-phase.js';
import { containerResourceStatus } from './container-status.js';
import { runningState } from './shared-status-parts.js';
import { formatPod } from '../values/pod-format.js';
import { addressFields, cond, containerID, mounts, nameList, waitingStatus, wholeSeconds } from './pod-status-parts.js';
import type { ContainerRun, NodeFacts, Terminated, TrackedPod } from './runtime-state.js';

/**
 * The status of a pod whose sandbox is up, read off the runtime's record of it: each container
 * as the runtime last left it (running, waiting out its crash-loop back-off, or terminated),
 * the phase and Initialized as the kubelet derives them (pod-phase.ts), Ready and
 * ContainersReady with the readiness gates, and the sandbox gone once the pod stopped or
 * completed.
 */
export function runningStatus(pod: Pod, tracked: TrackedPod, runningAt: Date, podIP: string | undefined, node: NodeFacts): V1PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  const changedAt = tracked.changedAt === undefined ? runningAt : wholeSeconds(new Date(tracked.changedAt));
  // An instance taken over from before an agent restart keeps the ID it was reported with.
  const terminatedState = (c: V1Container, t: Terminated, current?: string): V1ContainerStatus['state'] => ({
    terminated: { exitCode: t.exitCode, reason: t.reason, startedAt: wholeSeconds(new Date(t.startedAt)), finishedAt: wholeSeconds(new Date(t.finishedAt)), containerID: t.containerID ?? current ?? containerID(pod, c) },
  });
  // A container the runtime has started, in whatever state it is now.
  const known = (c: V1Container, run: ContainerRun): V1ContainerStatus => {
    const status: V1ContainerStatus = {
      name: c.name,
      image: c.image ?? '',
      imageID: c.image ?? '',
      containerID: run.containerID ?? containerID(pod, c),
      ready: true,
      restartCount: run.restartCount,
      started: true,
      state: runningState(wholeSeconds(new Date(run.startedAt))),
      ...containerResourceStatus(c),
      ...mounts(c, node),
    };
    if (run.last !== undefined) status.lastState = terminatedState(c, run.last);
    // A scenario's failing readiness probe (readiness-probes.ts): started, not ready.
    if (tracked.unready?.has(c.name) === true) status.ready = false;
    if (run.state === 'running' || run.terminated === undefined) return status;
    status.ready = false;
    status.started = false;
    if (run.state === 'waiting') {
      // The kubelet's doBackOff message: the wait armed for this restart, in Go's duration form.
      const waitMs = (run.crashLoop?.armedAt ?? run.terminated.finishedAt) - run.terminated.finishedAt;
      status.state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${formatDuration(waitMs)} restarting failed container=${c.name} pod=${formatPod(pod)}` } };
      status.lastState = terminatedState(c, run.terminated, run.containerID);
    } else {
      status.state = terminatedState(c, run.terminated, run.containerID);
    }
    return status;
  };
  // A regular init container is ready once it completed with 0, and started only while it runs.
  const initStatus = (c: V1Container): V1ContainerStatus => {
    const run = tracked.inits?.get(c.name);
    if (run === undefined) return waitingStatus(c, 'PodInitializing', node, tracked.previous?.get(c.name));
    const status = known(c, run);
    if (isSidecar(c)) return status;
    return { ...status, ready: run.state === 'exited' && run.terminated?.exitCode === 0, started: run.state === 'running' };
  };
  const initContainerStatuses = inits.map(initStatus);
  const containerStatuses = containers.map((c) => {
    const run = tracked.runs?.get(c.name);
    if (run !== undefined) return known(c, run);
    // A scenario's image that never pulls (image-pulls.ts): waiting with the last sync's reason.
    const pull = tracked.pulls?.get(c.name);
    const waiting = waitingStatus(c, pull?.reason ?? 'PodInitializing', node, tracked.previous?.get(c.name));
    if (pull !== undefined) waiting.state = { waiting: { reason: pull.reason, message: pull.message } };
    return waiting;
  });
  let phase = kubeletPodPhase(pod, initContainerStatuses, containerStatuses, tracked.stopped, tracked.runs !== undefined, isStaticPod(pod));
  // The status manager's TerminatePod: an ordinary pod the kubelet stopped ends terminal.
  if (tracked.stopped && !isStaticPod(pod) && phase !== 'Succeeded' && phase !== 'Failed') phase = 'Failed';
  const initialized = initializedCondition(pod, initContainerStatuses, containerStatuses, phase);
  const unready = [...inits.filter(isSidecar).map((c) => initContainerStatuses[inits.indexOf(c)]!), ...containerStatuses].filter((s) => !s.ready).map((s) => s.name);
  const done = isTerminalPhase(phase);
  const gates = unmetReadinessGates(pod);
  let ready: V1PodCondition;
  let containersReady: V1PodCondition;
  if (done) {
    const reason = phase === 'Succeeded' ? 'PodCompleted' : 'PodFailed';
    ready = cond('Ready', 'False', changedAt, reason);
    containersReady = cond('ContainersReady', 'False', changedAt, reason);
  } else if (unready.length > 0) {
    ready = cond('Ready', 'False', changedAt, 'ContainersNotReady', `containers with unready status: ${nameList(unready)}`);
    containersReady = cond('ContainersReady', 'False', changedAt, 'ContainersNotReady', `containers with unready status: ${nameList(unready)}`);
  } else {
    const readyAt = tracked.changedAt === undefined ? runningAt : changedAt;
    ready = gates.length > 0 ? cond('Ready', 'False', readyAt, 'ReadinessGatesNotReady', gates.join(', ')) : cond('Ready', 'True', readyAt);
    containersReady = cond('ContainersReady', 'True', readyAt);
  }
  // Initialized turns True when the last init container completed (at the start without any).
  const initializedAt = inits.length === 0 ? tracked.acceptedAt : tracked.initializedAt === undefined ? tracked.acceptedAt : wholeSeconds(new Date(tracked.initializedAt));
  // The sandbox goes once the pod has stopped or completed.
  const sandboxGone = tracked.stopped || done;
  const status: V1PodStatus = {
    phase,
    startTime: tracked.acceptedAt,
    ...addressFields(node.hostIP, podIP),
    conditions: [
      sandboxGone ? cond('PodReadyToStartContainers', 'False', changedAt) : cond('PodReadyToStartContainers', 'True', runningAt),
      cond('Initialized', initialized.status, initialized.status === 'True' ? initializedAt : tracked.acceptedAt, initialized.reason, initialized.message),
      ready,
      containersReady,
      cond('PodScheduled', 'True', tracked.acceptedAt),
    ],
    containerStatuses,
  };
  if (inits.length > 0) status.initContainerStatuses = initContainerStatuses;
  return status;
}

// The kubelet judges a static pod's readiness gates by the conditions of the static pod itself
// (from its manifest), not of its mirror: a gate is met only if the manifest's status says so.
function unmetReadinessGates(pod: Pod): string[] {
  const conditions = pod.status?.conditions ?? [];
  return (pod.spec?.readinessGates ?? []).flatMap((gate) => {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (c === undefined) return [`corresponding condition of pod readiness gate ${JSON.stringify(gate.conditionType)} does not exist.`];
    if (c.status !== 'True') return [`the status of pod readiness gate ${JSON.stringify(gate.conditionType)} is not "True", but ${c.status}`];
    return [];
  });
}
