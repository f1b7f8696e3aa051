import type { StatusProvider } from '../status/status-provider.js';

/**
 * One status provider for every node of a fleet, seen by each node as its own: a change is
 * told only to the node whose pod it is (learnt when that node first asks about the pod), not
 * to all 1,000 status writers, and a node's agent stopping does not stop the shared provider
 * (the fleet does, last). Terminations pass through, so a fleet's pods stop with their grace
 * period as a single node's do. Container Events are not passed on (docs/fleet.md).
 */
export interface SharedStatusProvider {
  forNode(nodeName: string): StatusProvider;
  readonly provider: StatusProvider;
}

export function shareStatusProvider(provider: StatusProvider): SharedStatusProvider {
  const listeners = new Map<string, Set<(uid: string) => void>>();
  const ownerOf = new Map<string, string>();
  provider.onChange?.((uid) => {
    const node = ownerOf.get(uid);
    if (node === undefined) return;
    for (const l of listeners.get(node) ?? []) l(uid);
  });
  const subscribe = (nodeName: string, listener: (uid: string) => void): (() => void) => {
    let set = listeners.get(nodeName);
    if (set === undefined) listeners.set(nodeName, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  };
  return {
    provider,
    forNode(nodeName) {
      const view: StatusProvider = {
        statusFor(pod, now) {
          const uid = pod.metadata?.uid;
          if (uid !== undefined) ownerOf.set(uid, nodeName);
          return provider.statusFor(pod, now);
        },
        forget(uid) {
          if (ownerOf.get(uid) === nodeName) ownerOf.delete(uid);
          provider.forget?.(uid);
        },
      };
      if (provider.onChange !== undefined) view.onChange = (listener) => subscribe(nodeName, listener);
      if (provider.terminate !== undefined) {
        view.terminate = (pod, gracePeriodSeconds) => {
          const uid = pod.metadata?.uid;
          if (uid !== undefined) ownerOf.set(uid, nodeName);
          return provider.terminate!(pod, gracePeriodSeconds);
        };
      }
      if (provider.containerLogs !== undefined) view.containerLogs = (uid, container) => provider.containerLogs?.(uid, container);
      return view;
    },
  };
}
