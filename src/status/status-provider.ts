import type { V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';

/**
 * Where pod statuses come from. kubelet-pods runs no containers, so the agent asks a provider
 * what each static pod's status is; the mirror status writer publishes the answer. The default
 * provider is the simulated runtime (src/runtime/); this file is only the contract, so that the
 * writer and the agent depend on it and not on the simulation.
 *
 * `statusFor` must be a pure function of the provider's state and `now`: asked twice without a
 * state change in between, it returns equal statuses, so unchanged statuses are not re-sent.
 */
export interface StatusProvider {
  statusFor(pod: Pod, now: Date): V1PodStatus;
  /**
   * Called once, before the pod is first asked about or stopped in this process, with the
   * status the pod last had in the API (an ordinary pod's own, a static pod's mirror's when
   * the mirror has the pod's hash). A real runtime keeps containers running while the kubelet
   * restarts; a provider that simulates one takes over what this status says ran (container
   * IDs, start times, restart counts, the pod's address and start time) instead of starting
   * the pod afresh, so a restarted agent reports the pod as it was. Ignored for a pod the
   * provider already runs or still holds exited containers of. Without it, every pod starts
   * afresh after a restart (docs/lifecycle.md, "Agent restart").
   */
  adopt?(pod: Pod, published: V1PodStatus): void;
  /**
   * Subscribes to "this pod's status changed" (by the pod's own UID); returns an unsubscribe.
   * While subscribed, the writer asks again only about new pods and pods reported here, in its
   * full resync (10 s) too, so every change must be reported. A provider without it is asked
   * about every pod on each full resync.
   */
  onChange?(listener: (uid: string) => void): () => void;
  /**
   * Stops the pod's containers, honouring `gracePeriodSeconds` (at least 1; the runtime gives
   * each container at least 2 s after SIGTERM), and resolves once every container has stopped.
   * While it runs, `statusFor` reports the stopping pod and, once stopped, its final status
   * (containers terminated with their exit codes); each change is reported through `onChange`.
   * Called again while stopping, a shorter grace period shortens the stop (a longer one changes
   * nothing) and every call resolves when the pod has stopped; called after, it resolves at once.
   * It never rejects. A provider without it stops pods at once (the status stays as it was).
   * See docs/lifecycle.md for the whole contract.
   */
  terminate?(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  /**
   * Lets go of a pod that is no longer run, cancelling anything scheduled for it. A runtime
   * may keep its exited containers for a while (see createSimulatedStatusProvider): a pod run
   * again with the same UID then continues their restart counts.
   */
  forget?(uid: string): void;
  /**
   * Subscribes to what the runtime reports about pods' containers as Kubernetes Events
   * (`Pulled`, `Created`, `Started`, `Killing`, `BackOff`, `SandboxChanged`); returns an
   * unsubscribe. The agent records them on the pod.
   */
  onContainerEvent?(listener: ContainerEventListener): () => void;

  /** Cancels every timer; the provider answers but no longer notifies. */
  stop?(): void;
  /**
   * What the runtime wrote for container `container` of the pod with UID `uid`, oldest first
   * (served by `/containerLogs`, so `kubectl logs` on the mirror pod shows it); undefined when
   * the container has written nothing.
   */
  containerLogs?(uid: string, container: string): readonly ContainerLogLine[] | undefined;
}

/**
 * One Event the kubelet's runtime manager would record about a pod's containers (reasons from
 * pkg/kubelet/events); the runtime says what happened, the agent turns it into an Event on the
 * pod, so `kubectl describe pod <mirror>` reads like a kubelet's.
 */
export interface ContainerEvent {
  readonly pod: Pod;
  /** `spec.containers{name}` or `spec.initContainers{name}`; undefined for the pod itself. */
  readonly fieldPath: string | undefined;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  /** The kubelet records this one on the Node too, with this message. */
  readonly nodeMessage?: string;
}

export type ContainerEventListener = (event: ContainerEvent) => void;

/** One line a container wrote, as its runtime keeps it. */
export interface ContainerLogLine {
  readonly time: Date;
  /** The line without its newline. */
  readonly text: string;
}
