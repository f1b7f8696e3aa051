import type { StatusProvider } from '../status/status-provider.js';

/**
 * One status provider for every node of a fleet, seen by each node as its own: a change is
 * told only to the node whose pod it is (learnt when that node first asks about the pod), not
 * to every node's status writer, and a node's agent stopping does not stop the shared provider
 * (the fleet does, last). Terminations pass through, so a fleet's pods stop with their grace
 * period as a single node's do. Container Events are not passed on (docs/fleet.md).
 */
export interface SharedStatusProvider {
  forNode(nodeName: string): StatusProvider;
  /**
   * The node is gone for good (an adopted node released, its agent stopped): the provider
   * forgets its pods (their state, logs and pod addresses) and the node's listeners go.
   */
  dropNode(nodeName: string): void;
  readonly provider: StatusProvider;
}

/**
 * How each method of the provider reaches a node's view: `node` methods learn (or drop) which
 * node a pod is on, `pass` ones are the provider's own, `fleet` ones are not in a node's view.
 * Every method of StatusProvider must be named here, so a new one cannot be left out unnoticed.
 */
const SHARING: Readonly<Record<keyof StatusProvider, 'node' | 'pass' | 'fleet'>> = {
  statusFor: 'node',
  terminate: 'node',
  // Taking a pod over after a restart makes it the taking node's, as a first status does.
  adopt: 'node',
  forget: 'node',
  onChange: 'node',
  containerLogs: 'pass',
  // A node's agent stopping must not stop the provider of the others.
  stop: 'fleet',
  // Recorded by no fleet node: it would multiply Event writes by the pods of every node.
  onContainerEvent: 'fleet',
};

/** What a node's view holds of its own. */
interface NodeView {
  nodeName: string;
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
  const passed: Partial<StatusProvider> = {};
  for (const key of Object.keys(SHARING) as Array<keyof StatusProvider>) {
    const method: unknown = provider[key];
    if (SHARING[key] === 'pass' && typeof method === 'function') Object.assign(passed, { [key]: method.bind(provider) });
  }
  // A node's view is an object holding its node's name, its methods those of one prototype:
  // a fleet makes one per node, and a closure per method (with the two methods the provider
  // bound for it) weighed about a kilobyte a node.
  const own = (nodeName: string, pod: { metadata?: { uid?: string } }): void => {
    const uid = pod.metadata?.uid;
    if (uid !== undefined) ownerOf.set(uid, nodeName);
  };
  const viewMethods: Partial<StatusProvider> & ThisType<NodeView> = {
    ...passed,
    statusFor(pod, now) {
      own(this.nodeName, pod);
      return provider.statusFor(pod, now);
    },
    forget(uid) {
      if (ownerOf.get(uid) === this.nodeName) ownerOf.delete(uid);
      provider.forget?.(uid);
    },
  };
  if (provider.adopt !== undefined) {
    const adopt = provider.adopt.bind(provider);
    viewMethods.adopt = function (this: NodeView, pod, published) {
      own(this.nodeName, pod);
      adopt(pod, published);
    };
  }
  if (provider.onChange !== undefined) {
    viewMethods.onChange = function (this: NodeView, listener) {
      return subscribe(this.nodeName, listener);
    };
  }
  if (provider.terminate !== undefined) {
    const terminate = provider.terminate.bind(provider);
    viewMethods.terminate = function (this: NodeView, pod, gracePeriodSeconds) {
      own(this.nodeName, pod);
      return terminate(pod, gracePeriodSeconds);
    };
  }
  return {
    provider,
    dropNode(nodeName) {
      for (const [uid, node] of ownerOf) {
        if (node !== nodeName) continue;
        ownerOf.delete(uid);
        provider.forget?.(uid);
      }
      listeners.delete(nodeName);
    },
    forNode(nodeName) {
      const view = Object.create(viewMethods) as StatusProvider & NodeView;
      view.nodeName = nodeName;
      return view;
    },
  };
}
