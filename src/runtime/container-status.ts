import type { V1Container, V1ContainerStatus, V1ResourceRequirements, V1VolumeMountStatus } from '@kubernetes/client-node';
import { canonicalResourceList } from '../values/quantity.js';
import { sharedByContent } from './shared-status-parts.js';

/**
 * The parts of a container's status that follow from its spec alone, as the kubelet v1.34 fills
 * them whatever the runtime says: the mounts, and the resources the container was given.
 */

/**
 * One entry per volume mount, in spec order: name, mount path, `readOnly` when true and, for a
 * read-only mount, `recursiveReadOnly` — `Enabled` only when the mount asks for it (`Enabled`, or
 * `IfPossible`) and the runtime supports recursive read-only mounts, else `Disabled`. A mount
 * whose recursive mode cannot be honoured (not read-only, with mount propagation, or `Enabled`
 * on a runtime without support) shows `Disabled`, as in the kubelet, which also refuses to start
 * such a container; the simulation starts it anyway. Undefined when the container has no mounts.
 */
export function volumeMountStatuses(container: V1Container, runtimeSupportsRecursiveReadOnly: boolean): V1VolumeMountStatus[] | undefined {
  const mounts = container.volumeMounts ?? [];
  if (mounts.length === 0) return undefined;
  return mounts.map((m) => {
    const status: V1VolumeMountStatus = { name: m.name, mountPath: m.mountPath };
    if (m.readOnly !== true) return status;
    status.readOnly = true;
    const wanted = m.recursiveReadOnly === 'Enabled' || m.recursiveReadOnly === 'IfPossible';
    const propagation = m.mountPropagation === undefined || m.mountPropagation === 'None';
    status.recursiveReadOnly = wanted && propagation && runtimeSupportsRecursiveReadOnly ? 'Enabled' : 'Disabled';
    return status;
  });
}

/**
 * The container's resources as the kubelet holds them once the pod is admitted: the spec's,
 * with the API defaulting the kubelet applies to a decoded manifest (a resource given only a
 * limit gets a request of the same amount) and every quantity in the form the API server
 * stores. Claims are kept as they are.
 */
export function allocatedResources(container: V1Container): V1ResourceRequirements {
  const spec = container.resources ?? {};
  const out: V1ResourceRequirements = {};
  const limits = spec.limits as Record<string, unknown> | undefined;
  const requests = spec.requests as Record<string, unknown> | undefined;
  if (limits !== undefined && limits !== null) out.limits = canonicalResourceList(limits);
  if ((requests !== undefined && requests !== null) || out.limits !== undefined) {
    out.requests = { ...out.limits, ...canonicalResourceList(requests ?? {}) };
  }
  if (spec.claims !== undefined) out.claims = spec.claims.map((c) => ({ ...c }));
  return out;
}

/**
 * `resources` and `allocatedResources` of a container the runtime knows (created, running or
 * exited). The simulated runtime applies exactly what was allocated, so `resources` is the
 * allocation (an empty object for a container without any) and `allocatedResources` its
 * requests, left out when there are none. A container still waiting for its first start has
 * neither, as in the kubelet. Equal ones held once (shared-status-parts.ts).
 */
export const containerResourceStatus: (container: V1Container) => Pick<V1ContainerStatus, 'resources' | 'allocatedResources'> = sharedByContent((container) => {
  const resources = allocatedResources(container);
  const requests = resources.requests ?? {};
  return Object.keys(requests).length > 0 ? { resources, allocatedResources: { ...requests } } : { resources };
});
