import { ApiException, type CoreV1Api, type KubeConfig, type V1PodList } from '@kubernetes/client-node';
import type { Logger } from '../logger.js';
import type { Pod } from '../pod/types.js';
import { createApiserverSource, type ApiserverSource } from '../sources/apiserver-source.js';
import { kubePodsListWatch, type PodListWatch, type WatchEventType } from '../sources/pod-list-watch.js';
import type { PodUpdate } from '../sources/types.js';
import type { Clock } from '../time/clock.js';

export interface PodFanOutOptions {
  /** One list and watch of every pod bound to a node; `kubePodsOnNodes` builds it. */
  listWatch: PodListWatch;
  clock: Clock;
  logger?: Logger;
}

/**
 * One list+watch of pods for the whole process, handed out by `spec.nodeName`: each node's API
 * server source gets a `PodListWatch` (listWatchFor) that lists from the shared store and
 * watches a per-node stream of it, so the per-node source (src/sources/apiserver-source.ts) is
 * the very code `kubelet-pods run` uses, while the API server serves one watch instead of one
 * per node.
 *
 * The shared list+watch itself is an API server source (same retries, 410 relists, watchdog);
 * its SETs are turned into per-node ADDED/MODIFIED/DELETED. A node whose stream had an event
 * while its source was not watching (between a list and a watch, during a retry) answers that
 * source's next watch with 410 Gone, so the source relists, from memory, and misses nothing.
 */
export interface PodFanOut {
  /** Nodes must be added before their sources start; pods of other nodes are dropped. */
  addNode(nodeName: string): void;
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

const keyOf = (pod: Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

export function createPodFanOut(options: PodFanOutOptions): PodFanOut {
  const nodes = new Map<string, NodeStream>();
  let synced = false;
  let listVersion = '0';
  const waiters: (() => void)[] = [];

  const deliver = (stream: NodeStream, type: WatchEventType, pod: Pod): void => {
    const rv = pod.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') stream.version = rv;
    if (stream.subscriber !== undefined) stream.subscriber(type, pod);
    else stream.missed = true;
  };

  const onUpdate = (update: PodUpdate): void => {
    if (update.delta === undefined) {
      // The first full set (later relists arrive as deltas).
      for (const stream of nodes.values()) stream.pods.clear();
      for (const pod of update.pods) {
        const stream = nodes.get(pod.spec?.nodeName ?? '');
        if (stream !== undefined) stream.pods.set(keyOf(pod), pod);
      }
      for (const pod of update.pods) {
        const rv = pod.metadata?.resourceVersion ?? '';
        if (rv !== '' && (listVersion === '0' || Number(rv) > Number(listVersion))) listVersion = rv;
      }
      for (const stream of nodes.values()) {
        stream.version = listVersion;
        stream.missed = true;
      }
      synced = true;
      for (const wake of waiters.splice(0)) wake();
      return;
    }
    for (const pod of update.delta.removed) {
      const stream = nodes.get(pod.spec?.nodeName ?? '');
      const key = keyOf(pod);
      if (stream === undefined || stream.pods.get(key)?.metadata?.uid !== pod.metadata?.uid) continue;
      stream.pods.delete(key);
      deliver(stream, 'DELETED', pod);
    }
    for (const pod of update.delta.changed) {
      const stream = nodes.get(pod.spec?.nodeName ?? '');
      if (stream === undefined) continue;
      const key = keyOf(pod);
      const known = stream.pods.has(key);
      stream.pods.set(key, pod);
      deliver(stream, known ? 'MODIFIED' : 'ADDED', pod);
    }
  };

  const source: ApiserverSource = createApiserverSource({
    listWatch: options.listWatch,
    nodeName: '*',
    onUpdate,
    clock: options.clock,
    ...(options.logger ? { logger: options.logger } : {}),
  });

  const whenSynced = (): Promise<void> => (synced ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve)));

  return {
    addNode(nodeName) {
      if (!nodes.has(nodeName)) nodes.set(nodeName, { pods: new Map(), version: listVersion, missed: true, subscriber: undefined });
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
          return {
            abort: () => {
              if (s.subscriber === onEvent) s.subscriber = undefined;
            },
          };
        },
      };
    },
    start: () => source.start(),
    async stop() {
      await source.stop();
      for (const stream of nodes.values()) stream.subscriber = undefined;
    },
    synced: () => synced,
  };
}

/**
 * List and watch of every pod bound to some node (`spec.nodeName!=`), for the fan-out: the
 * list through the process's API clients (its pool and rate limiter), the watch on one
 * long-lived connection of its own.
 */
export function kubePodsOnNodes(kubeConfig: KubeConfig, core: CoreV1Api, timeoutSeconds: number): PodListWatch {
  return kubePodsListWatch(kubeConfig, 'spec.nodeName!=', timeoutSeconds, core);
}
