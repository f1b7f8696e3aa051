import type { V1Container, V1ContainerStatus, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';
import { volumeMountStatuses } from './container-status.js';
import { hostIPList, madeEachTime, secondOf, sharedCondition } from './shared-status-parts.js';
import type { ExitedContainer } from './exited-containers.js';
import type { NodeFacts } from './runtime-state.js';

/**
 * The pieces both the pending and the running status are built from, in the shapes the
 * kubelet's status generation gives them.
 */

/** A condition, held once for every status that has it (shared-status-parts.ts). */
export function cond(type: string, status: string, at: Date, reason?: string, message?: string): V1PodCondition {
  return sharedCondition(type, status, at, reason, message);
}

// Go prints a list of names as `[a b]`; the kubelet's condition messages use that form.
export function nameList(names: readonly string[]): string {
  return `[${names.join(' ')}]`;
}

export function addressFields(hostIP: string | undefined, podIP: string | undefined): Partial<V1PodStatus> {
  const out: Partial<V1PodStatus> = {};
  if (hostIP !== undefined) {
    out.hostIP = hostIP;
    out.hostIPs = hostIPList(hostIP);
  }
  if (podIP !== undefined) {
    out.podIP = podIP;
    out.podIPs = [{ ip: podIP }];
  }
  return out;
}

/**
 * A container that has not started yet (no containerID, nothing allocated shown); `before`, the
 * earlier run's instance the runtime kept, gives its count and lastState.
 */
export function waitingStatus(c: V1Container, reason: string, node: NodeFacts, before?: ExitedContainer): V1ContainerStatus {
  const status: V1ContainerStatus = { name: c.name, image: c.image ?? '', imageID: '', ready: false, restartCount: before?.restartCount ?? 0, started: false, state: { waiting: { reason } }, ...mounts(c, node) };
  if (before?.terminated !== undefined) status.lastState = { terminated: before.terminated };
  return status;
}

const mountsWith = (recursiveReadOnly: boolean) =>
  madeEachTime((c): Pick<V1ContainerStatus, 'volumeMounts'> => {
    const volumeMounts = volumeMountStatuses(c, recursiveReadOnly);
    return volumeMounts === undefined ? {} : { volumeMounts };
  });
const mountsOf = { true: mountsWith(true), false: mountsWith(false) };

/** The container's `volumeMounts`, as a part to spread into its status (made for each status). */
export function mounts(c: V1Container, node: NodeFacts): Pick<V1ContainerStatus, 'volumeMounts'> {
  return mountsOf[node.recursiveReadOnlyMounts ? 'true' : 'false'](c);
}

/** The ID of a container the runtime knows: `kubelet-pods://<pod uid>/<container name>`. */
export function containerID(pod: Pod, c: V1Container): string {
  return `kubelet-pods://${pod.metadata?.uid ?? ''}/${c.name}`;
}

/** Times as the API server stores them, so that a status read back compares equal (one Date per second). */
export function wholeSeconds(d: Date): Date {
  return secondOf(d.getTime());
}
