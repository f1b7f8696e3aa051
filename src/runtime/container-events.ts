import type { V1Container } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';
import type { ContainerEvent } from '../status/status-provider.js';
import { formatPod } from '../values/pod-format.js';

/**
 * The Events the kubelet's runtime manager records about a pod's containers (reasons from
 * pkg/kubelet/events, messages as kuberuntime and the image manager word them), for the
 * simulated runtime to report the same. Their shape, ContainerEvent, is part of the
 * StatusProvider contract (src/status/status-provider.ts).
 */

/** The field path the kubelet's container references carry. */
export function containerFieldPath(pod: Pod, container: string): string {
  const init = (pod.spec?.initContainers ?? []).some((c) => c.name === container);
  return `spec.${init ? 'initContainers' : 'containers'}{${container}}`;
}

/**
 * The pull policy the API server defaults (`IfNotPresent`, or `Always` for a `:latest` or
 * untagged image that has no digest); a manifest's own policy wins.
 */
export function pullPolicyOf(c: V1Container): string {
  if (c.imagePullPolicy !== undefined && c.imagePullPolicy !== '') return c.imagePullPolicy;
  const image = c.image ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const tag = lastPart.includes(':') ? lastPart.slice(lastPart.indexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

type Event = Omit<ContainerEvent, 'pod' | 'fieldPath'>;

/**
 * What a container's start reports: the image step (`Pulling` then `Pulled` when the image is
 * fetched: new to the node, or pull policy Always; it takes no time here; else `Pulled` saying
 * it is present), then `Created` and `Started`. `present`: the node already has the image.
 */
export function startEvents(c: V1Container, present: boolean): Event[] {
  const image = c.image ?? '';
  const policy = pullPolicyOf(c);
  // `Never` with the image missing fails the kubelet's start (ErrImageNeverPull); the
  // simulation has every image, so it is taken as present.
  const pull = policy === 'Always' || (!present && policy !== 'Never');
  const imageEvents: Event[] = pull
    ? [
        { type: 'Normal', reason: 'Pulling', message: `Pulling image ${JSON.stringify(image)}` },
        { type: 'Normal', reason: 'Pulled', message: `Successfully pulled image ${JSON.stringify(image)} in 0s (0s including waiting). Image size: 0 bytes.` },
      ]
    : [{ type: 'Normal', reason: 'Pulled', message: `Container image ${JSON.stringify(image)} already present on machine` }];
  return [
    ...imageEvents,
    { type: 'Normal', reason: 'Created', message: `Created container: ${c.name}` },
    { type: 'Normal', reason: 'Started', message: `Started container ${c.name}` },
  ];
}

/** A running container asked to stop (kuberuntime's killContainer). */
export function killingEvent(name: string): Event {
  return { type: 'Normal', reason: 'Killing', message: `Stopping container ${name}` };
}

/** A container waiting out its crash-loop back-off before the next start. */
export function backOffEvent(pod: Pod, name: string): Event {
  return { type: 'Warning', reason: 'BackOff', message: `Back-off restarting failed container ${name} in pod ${formatPod(pod)}` };
}

/**
 * The kubelet's DNS configurer, creating a pod's sandbox without cluster DNS servers: a pod
 * whose policy asks for them (`ClusterFirst`, the default, off the host network, or
 * `ClusterFirstWithHostNet`) falls back to the node's resolver, and it says so on the pod and
 * the Node. Undefined when the pod needs no cluster DNS.
 */
export function missingClusterDNSEvent(pod: Pod): Omit<ContainerEvent, 'pod' | 'fieldPath'> | undefined {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  const wantsCluster = policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && pod.spec?.hostNetwork !== true);
  if (!wantsCluster) return undefined;
  const nodeMessage = 'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.';
  return { type: 'Warning', reason: 'MissingClusterDNS', message: `pod: ${JSON.stringify(formatPod(pod))}. ${nodeMessage}`, nodeMessage };
}

/** A pod run again while the runtime still holds its previous sandbox (about the pod, no field path). */
export function sandboxChangedEvent(): Event {
  return { type: 'Normal', reason: 'SandboxChanged', message: 'Pod sandbox changed, it will be killed and re-created.' };
}

/**
 * A pull that failed (the image manager's `Failed`, then kuberuntime's `Failed` with the error
 * kind): pkg/kubelet/images/image_manager.go and kuberuntime/kuberuntime_container.go.
 */
export function pullFailedEvents(image: string, error: string): Event[] {
  return [
    { type: 'Normal', reason: 'Pulling', message: `Pulling image ${JSON.stringify(image)}` },
    { type: 'Warning', reason: 'Failed', message: `Failed to pull image ${JSON.stringify(image)}: ${error}` },
    { type: 'Warning', reason: 'Failed', message: 'Error: ErrImagePull' },
  ];
}

/** A sync that finds the image's pull still backing off (the image manager's `BackOff`). */
export function pullBackOffEvents(image: string): Event[] {
  return [
    { type: 'Normal', reason: 'BackOff', message: `Back-off pulling image ${JSON.stringify(image)}` },
    { type: 'Warning', reason: 'Failed', message: 'Error: ImagePullBackOff' },
  ];
}

/** A readiness probe that failed (the prober's `Unhealthy`, pkg/kubelet/prober/prober.go). */
export function readinessFailedEvent(output: string): Event {
  return { type: 'Warning', reason: 'Unhealthy', message: `Readiness probe failed: ${output}` };
}
