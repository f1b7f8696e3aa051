import type { V1PodStatus } from '@kubernetes/client-node';
import type { Pod } from '../pod/types.js';
import type { ContainerEventListener, ContainerLogLine, StatusProvider } from './status-provider.js';

/** The optional methods of a provider. */
const OPTIONAL_METHODS = ['onChange', 'forget', 'adopt', 'terminate', 'stop', 'containerLogs', 'onContainerEvent'] as const satisfies readonly (keyof StatusProvider)[];

/**
 * A provider that passes every call on to `inner`; a wrapper extends it and overrides what it
 * adds. A class, its methods on the prototype: a fleet makes its wrappers once per node, and a
 * closure per method cost several hundred bytes a node. Only the optional methods `inner` has
 * are there (callers behave differently without them), but those named in `always`: the
 * others are hidden by an own `undefined`.
 */
export abstract class ForwardingStatusProvider implements StatusProvider {
  constructor(
    protected readonly inner: StatusProvider,
    always: readonly (keyof StatusProvider)[] = [],
  ) {
    for (const name of OPTIONAL_METHODS) if (inner[name] === undefined && !always.includes(name)) Object.defineProperty(this, name, { value: undefined });
  }

  statusFor(pod: Pod, now: Date): V1PodStatus {
    return this.inner.statusFor(pod, now);
  }

  onChange(listener: (uid: string) => void): () => void {
    return this.inner.onChange!(listener);
  }

  forget(uid: string): void {
    this.inner.forget?.(uid);
  }

  adopt(pod: Pod, published: V1PodStatus): void {
    this.inner.adopt!(pod, published);
  }

  terminate(pod: Pod, gracePeriodSeconds: number): Promise<void> {
    return this.inner.terminate!(pod, gracePeriodSeconds);
  }

  stop(): void {
    this.inner.stop!();
  }

  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined {
    return this.inner.containerLogs!(uid, container);
  }

  onContainerEvent(listener: ContainerEventListener): () => void {
    return this.inner.onContainerEvent!(listener);
  }
}
