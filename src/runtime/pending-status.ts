import type { V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';
import { isSidecar } from '../status/pod-phase.js';
import type { ExitedPod } from './exited-containers.js';
import { addressFields, cond, nameList, waitingStatus } from './pod-status-parts.js';
import type { NodeFacts } from './runtime-state.js';

/**
 * The status of a pod the runtime has accepted but whose sandbox is not up yet: phase Pending
 * (Running for a pod run again whose restart policy restarts its exited containers), no pod
 * address unless on the host network, every container waiting, the pending-state conditions.
 */
export function pendingStatus(pod: Pod, acceptedAt: Date, node: NodeFacts, previous: ExitedPod | undefined): V1PodStatus {
  const inits = pod.spec?.initContainers ?? [];
  const containers = pod.spec?.containers ?? [];
  const hasInits = inits.length > 0;
  const unready = nameList([...inits.filter(isSidecar), ...containers].map((c) => c.name));
  const status: V1PodStatus = {
    phase: restartingPhase(pod, previous) ?? 'Pending',
    startTime: acceptedAt,
    // The sandbox has no address yet; a host-network pod has the node's from the start.
    ...addressFields(node.hostIP, pod.spec?.hostNetwork === true ? node.hostIP : undefined),
    conditions: [
      cond('PodReadyToStartContainers', 'False', acceptedAt),
      hasInits
        ? cond('Initialized', 'False', acceptedAt, 'ContainersNotInitialized', `containers with incomplete status: ${nameList(inits.map((c) => c.name))}`)
        : cond('Initialized', 'True', acceptedAt),
      cond('Ready', 'False', acceptedAt, 'ContainersNotReady', `containers with unready status: ${unready}`),
      cond('ContainersReady', 'False', acceptedAt, 'ContainersNotReady', `containers with unready status: ${unready}`),
      cond('PodScheduled', 'True', acceptedAt),
    ],
    containerStatuses: containers.map((c) => waitingStatus(c, hasInits ? 'PodInitializing' : 'ContainerCreating', node, previous?.get(c.name))),
  };
  if (hasInits) status.initContainerStatuses = inits.map((c) => waitingStatus(c, 'PodInitializing', node, previous?.get(c.name)));
  return status;
}

/**
 * A pod run again whose containers wait for their new sandbox: the kubelet's getPhase counts a
 * waiting container with a last termination as stopped, so the pod is Running when its restart
 * policy restarts them; undefined otherwise (Pending).
 */
function restartingPhase(pod: Pod, previous: ExitedPod | undefined): string | undefined {
  if (previous === undefined) return undefined;
  const ended = (pod.spec?.containers ?? []).map((c) => previous.get(c.name)?.terminated);
  if (ended.length === 0 || ended.some((t) => t === undefined)) return undefined;
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (policy === 'Always' || (policy === 'OnFailure' && ended.some((t) => t?.exitCode !== 0))) return 'Running';
  return undefined;
}
