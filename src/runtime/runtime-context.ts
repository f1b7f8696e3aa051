import type { V1Container } from '@kubernetes/client-node';
import type { Clock } from '../time/clock.js';
import type { Pod } from '../pod/types.js';
import type { ContainerEvent } from '../status/status-provider.js';
import type { NodeFacts, TrackedPod } from './runtime-state.js';

/**
 * What the container runs (container-runs.ts) and the termination (pod-termination.ts) need
 * from the provider that holds the pods. Handing them this instead of the provider keeps its
 * pod table and listeners private, and keeps each of those files about one job.
 */
export interface RuntimeContext {
  readonly clock: Clock;
  readonly node: NodeFacts;
  /** The provider was stopped: nothing new is scheduled and nobody is told. */
  isStopped(): boolean;
  /** Whether `tracked` is still what the provider runs under `uid` (not forgotten or replaced). */
  isCurrent(uid: string, tracked: TrackedPod): boolean;
  /** Tells the listeners that the pod's status changed. */
  notify(uid: string): void;
  /** Adds a line to a container's log, stamped `at` (wall ms) in whole seconds. */
  log(uid: string, container: string, at: number, text: string): void;
  /** Reports an Event about the pod (`container` undefined) or one of its containers. */
  event(pod: Pod, container: string | undefined, e: Omit<ContainerEvent, 'pod' | 'fieldPath'>): void;
  /** Reports a container start's image, create and start Events; its image is then present. */
  containerStarts(pod: Pod, c: V1Container): void;
}
