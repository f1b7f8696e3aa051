import type { V1PodList } from '@kubernetes/client-node';
import { ApiException } from '../kube/api-exception.js';
import type { KubeConfigLike as KubeConfig } from '../kube/kubeconfig.js';
import type { CoreV1Api } from '../kube/typed-apis.js';
import type { Logger } from '../logger.js';
import type { WatchEventType } from '../kube/list-watch.js';
import { sameVersion } from '../kube/object-version.js';
import { createReflector, type ObjectEventType, type Reflector } from '../kube/reflector.js';
import type { Pod } from '../pod/types.js';
import { kubePodsListWatch, podReflectorWording, type PodListWatch } from '../sources/pod-list-watch.js';
import type { Clock } from '../time/clock.js';
import { randomWatchTimeoutSeconds } from '../kube/watch-timeout.js';
import { objectKey } from '../values/object-key.js';
import { createSharedValues } from '../values/shared-values.js';
import { reuseUnchangedParts } from './pod-versions.js';
import { sharePodParts } from './shared-pod-parts.js';

export interface PodFanOutOptions {
  /** One list and watch of every pod bound to a node; `kubePodsOnNodes` builds it. */
  listWatch: PodListWatch;
  clock: Clock;
  logger?: Logger;
  /**
   * Keep the pods of nodes not added too, so that a node added later (a Node the fleet adopts,
   * src/fleet/node-adoption.ts) starts with the pods bound to it before. Off by default: the
   * pods of nodes the fleet never runs are then dropped.
   */
  keepOtherNodes?: boolean;
  /** How long a node's watch lasts before the fan-out closes it; 240 to 300 s, random, by default. */
  nodeWatchSeconds?: number;
  /** About how many pods a relist hands out before it lets the event loop run; `RELIST_SLICE` by default. */
  relistSlice?: number;
}

/** Pods (plus one per node) a relist hands out between two turns of the event loop. */
export const RELIST_SLICE = 2_000;

/**
 * One list+watch of pods for the whole process, handed out by `spec.nodeName`: each node's API
 * server source gets a `PodListWatch` (listWatchFor) that lists from the shared store and
 * watches a per-node stream of it, so the per-node source (src/sources/apiserver-source.ts) is
 * the very code `kubelet-pods run` uses, while the API server serves one watch instead of one
 * per node.
 *
 * The shared list+watch is a reflector (src/kube/reflector.ts: retries, 410 relists, watchdog);
 * its list and events are turned into per-node ADDED/MODIFIED/DELETED. A node whose stream had an event
 * while its source was not watching (between a list and a watch, during a retry) answers that
 * source's next watch with 410 Gone, so the source relists, from memory, and misses nothing.
 */
export interface PodFanOut {
  /**
   * Nodes must be added before their sources start; pods of other nodes are dropped (unless
   * `keepOtherNodes`: then a node added late starts with the pods already bound to it).
   */
  addNode(nodeName: string): void;
  /** The node's source is stopped for good: its stream goes (its pods back to the others' with `keepOtherNodes`). */
  removeNode(nodeName: string): void;
  listWatchFor(nodeName: string): PodListWatch;
  start(): void;
  stop(): Promise<void>;
  /** True once the first full list arrived. */
  synced(): boolean;
}

interface NodeStream {
  pods: Map<string, Pod>;
  /** The resourceVersion the node's source holds when it has seen everything. */
  version: string;
  /** An event was produced while no watch was open. */
  missed: boolean;
  subscriber: ((type: WatchEventType, object: unknown) => void) | undefined;
}

export function createPodFanOut(options: PodFanOutOptions): PodFanOut {
  const nodes = new Map<string, NodeStream>();
  /** With keepOtherNodes: the pods of nodes not added, by node name. */
  const others = new Map<string, Map<string, Pod>>();
  let synced = false;
  let stopping = false;
  const closeAfterMs = (): number => (options.nodeWatchSeconds ?? 240 + Math.floor(Math.random() * 60)) * 1000;
  const relistSlice = options.relistSlice ?? RELIST_SLICE;
  let listVersion = '0';
  /** The newest resourceVersion delivered: where a node added late starts. */
  let lastVersion = '0';
  const keepOther = (type: ObjectEventType, pod: Pod): void => {
    const nodeName = pod.spec?.nodeName ?? '';
    if (!options.keepOtherNodes || nodeName === '') return;
    const key = objectKey(pod);
    const pods = others.get(nodeName);
    if (type !== 'DELETED') others.set(nodeName, (pods ?? new Map<string, Pod>()).set(key, pod));
    else if (pods?.get(key)?.metadata?.uid === pod.metadata?.uid && pods?.delete(key) && pods.size === 0) others.delete(nodeName);
  };
  const note = (pod: Pod): void => {
    const rv = pod.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '' && Number(rv) > Number(lastVersion)) lastVersion = rv;
  };
  const waiters: (() => void)[] = [];

  const deliver = (stream: NodeStream, type: WatchEventType, pod: Pod): void => {
    const rv = pod.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') stream.version = rv;
    if (stream.subscriber !== undefined) stream.subscriber(type, pod);
    else stream.missed = true;
  };

  /** The first list: every node's pods, and the version each source lists at. */
  const firstList = (items: Pod[]): void => {
    for (const stream of nodes.values()) stream.pods.clear();
    others.clear();
    for (const pod of items) {
      const stream = nodes.get(pod.spec?.nodeName ?? '');
      if (stream !== undefined) stream.pods.set(objectKey(pod), pod);
      else keepOther('ADDED', pod);
      note(pod);
    }
    for (const pod of items) {
      const rv = pod.metadata?.resourceVersion ?? '';
      if (rv !== '' && (listVersion === '0' || Number(rv) > Number(listVersion))) listVersion = rv;
    }
    for (const stream of nodes.values()) {
      stream.version = listVersion;
      stream.missed = true;
    }
    synced = true;
    for (const wake of waiters.splice(0)) wake();
  };

  /**
   * A relist after the first: each node is sent what changed since, as the events its watch
   * would have carried (the deletions first); a pod at the version already held is left out.
   * The nodes are gone through in slices, the event loop free between them: a relist of
   * 100,000 pods sent as one pass held the fleet's loop for many seconds, and its Leases
   * waited (docs/fleet.md, "At scale"). The watch starts only once the last slice is done,
   * and a node's events are all sent within one slice, so each node sees a whole relist.
   */
  const relist = async (items: Pod[]): Promise<void> => {
    const listedByNode = new Map<string, Pod[]>();
    others.clear();
    for (const pod of items) {
      note(pod);
      const nodeName = pod.spec?.nodeName ?? '';
      const listed = listedByNode.get(nodeName);
      if (listed !== undefined) listed.push(pod);
      else if (nodes.has(nodeName)) listedByNode.set(nodeName, [pod]);
      else keepOther('ADDED', pod);
    }
    // Nodes added during the relist start from `others`, which already holds this list.
    let sinceYield = 0;
    for (const [nodeName, stream] of [...nodes]) {
      if (stopping) return;
      // A node removed meanwhile is skipped.
      if (nodes.get(nodeName) !== stream) continue;
      const listed = listedByNode.get(nodeName) ?? [];
      relistNode(stream, listed);
      sinceYield += listed.length + 1;
      if (sinceYield >= relistSlice) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  };

  const relistNode = (stream: NodeStream, listed: readonly Pod[]): void => {
    const listedByKey = new Map(listed.map((pod) => [objectKey(pod), pod]));
    for (const [key, held] of stream.pods) {
      if (listedByKey.get(key)?.metadata?.uid === held.metadata?.uid) continue;
      stream.pods.delete(key);
      deliver(stream, 'DELETED', held);
    }
    for (const [key, pod] of listedByKey) {
      const held = stream.pods.get(key);
      if (held !== undefined && sameVersion(held, pod)) continue;
      if (held !== undefined) reuseUnchangedParts(held, pod);
      stream.pods.set(key, pod);
      deliver(stream, held !== undefined ? 'MODIFIED' : 'ADDED', pod);
    }
  };

  const onEvent = (type: ObjectEventType, pod: Pod): void => {
    note(pod);
    const stream = nodes.get(pod.spec?.nodeName ?? '');
    if (stream === undefined) return keepOther(type, pod);
    const key = objectKey(pod);
    if (type === 'DELETED') {
      if (stream.pods.get(key)?.metadata?.uid !== pod.metadata?.uid) return;
      stream.pods.delete(key);
      deliver(stream, 'DELETED', pod);
      return;
    }
    const held = stream.pods.get(key);
    if (held !== undefined) reuseUnchangedParts(held, pod);
    stream.pods.set(key, pod);
    deliver(stream, held !== undefined ? 'MODIFIED' : 'ADDED', pod);
  };

  const reflector: Reflector = createReflector({
    listWatch: options.listWatch,
    onList: (items) => (synced ? relist(items) : firstList(items)),
    onEvent,
    wording: podReflectorWording('*'),
    clock: options.clock,
    logger: options.logger,
  });

  const whenSynced = (): Promise<void> => (synced ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve)));

  return {
    addNode(nodeName) {
      if (nodes.has(nodeName)) return;
      // Added after the first list: its pods so far, at the newest version seen.
      const pods = others.get(nodeName) ?? new Map<string, Pod>();
      others.delete(nodeName);
      nodes.set(nodeName, { pods, version: synced ? lastVersion : listVersion, missed: true, subscriber: undefined });
    },
    removeNode(nodeName) {
      const stream = nodes.get(nodeName);
      if (stream === undefined) return;
      nodes.delete(nodeName);
      stream.subscriber = undefined;
      if (options.keepOtherNodes && stream.pods.size > 0) others.set(nodeName, stream.pods);
    },
    listWatchFor(nodeName) {
      const stream = (): NodeStream => {
        const s = nodes.get(nodeName);
        if (s === undefined) throw new Error(`node ${nodeName} was not added to the pod fan-out`);
        return s;
      };
      return {
        async list(): Promise<V1PodList> {
          await whenSynced();
          const s = stream();
          s.missed = false;
          return { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: s.version }, items: [...s.pods.values()] };
        },
        async watch(resourceVersion, onEvent, done) {
          const s = stream();
          if (s.missed || resourceVersion !== s.version || s.subscriber !== undefined) {
            // Something happened that this watcher did not see: have it relist (from memory).
            queueMicrotask(() => done(new ApiException(410, 'Gone', undefined, {})));
            return { abort: () => undefined };
          }
          s.subscriber = onEvent;
          // Closed after 4 to 5 minutes as the API server closes a watch at its timeout: a node
          // without pod events would otherwise have its source's watchdog (6 minutes at the
          // least) warn of a silent watch, every node of an idle fleet in turn. The source
          // watches again from the version it holds; nothing is listed.
          const close = options.clock.setTimeout(() => {
            if (s.subscriber !== onEvent) return;
            s.subscriber = undefined;
            done(null);
          }, closeAfterMs());
          return {
            abort: () => {
              options.clock.clearTimeout(close);
              if (s.subscriber === onEvent) s.subscriber = undefined;
            },
          };
        },
      };
    },
    start: () => reflector.start(),
    async stop() {
      stopping = true;
      await reflector.stop();
      for (const stream of nodes.values()) stream.subscriber = undefined;
    },
    synced: () => synced,
  };
}

/**
 * List and watch of every pod bound to some node (`spec.nodeName!=`), for the fan-out: the
 * list through the process's API clients (its pool and rate limiter), the watch on one
 * long-lived connection of its own. Every pod is kept without its managedFields, which nothing
 * in the fleet reads and which weighed most of an ordinary pod (docs/performance.md, "Where the
 * fleet's memory goes"); so the fleet's `/pods` shows none (docs/kubelet-differences.md).
 */
export function kubePodsOnNodes(kubeConfig: KubeConfig, core: CoreV1Api, timeoutSeconds: number = randomWatchTimeoutSeconds()): PodListWatch {
  // And the parts pods have in common held once (src/fleet/shared-pod-parts.ts).
  const values = createSharedValues();
  return kubePodsListWatch(kubeConfig, 'spec.nodeName!=', timeoutSeconds, core, { prepare: (pod) => sharePodParts(values, pod), withoutManagedFields: true });
}
