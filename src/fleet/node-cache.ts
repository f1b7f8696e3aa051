import { CoreV1Api, Watch, type KubeConfig, type V1Node, type V1PodList } from '@kubernetes/client-node';
import type { Logger } from '../logger.js';
import type { NodeApi } from '../node/node-registration.js';
import type { Pod } from '../pod/types.js';
import { trimmedListWatch } from '../kube/trimmed-list-watch.js';
import { createApiserverSource, type ApiserverSource } from '../sources/apiserver-source.js';
import type { PodListWatch, WatchEventType } from '../sources/pod-list-watch.js';
import type { Clock } from '../time/clock.js';

/**
 * One watch of the Nodes for the whole fleet. Node registration reads its Node back every
 * 10 s, as the kubelet does with a GET; with 1,000 nodes that is 100 GETs a second for objects
 * the process could simply watch. `nodeApi(core)` answers `readNode` from the watch when it
 * holds a version at least as new as the last one this process wrote (so a read never goes
 * back in time), and sends a GET otherwise; creates and status patches go to the API server.
 *
 * The watch is an API server source (its retries, 410 relists and watchdog) over a list and
 * watch of Nodes: the source keys objects by namespace/name and passes them on unmodified.
 */
export interface NodeCache {
  nodeApi(core: NodeApi): NodeApi;
  start(): void;
  stop(): Promise<void>;
}

const rvNumber = (node: V1Node | undefined): number => Number(node?.metadata?.resourceVersion ?? -1);

/**
 * A list and watch of every Node, in the shape an API server source takes (its objects are
 * passed on keyed by name, without their managedFields): the node cache's, and the demo's
 * view of a fleet.
 */
export function kubeNodesListWatch(kubeConfig: KubeConfig): PodListWatch {
  const api = kubeConfig.makeApiClient(CoreV1Api);
  const watcher = new Watch(kubeConfig);
  // Nodes are kept without their managedFields (src/kube/managed-fields.ts).
  return trimmedListWatch({
    list: async () => (await api.listNode()) as unknown as V1PodList,
    watch: (resourceVersion, onEvent, done) =>
      watcher.watch(
        '/api/v1/nodes',
        { resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300 + Math.floor(Math.random() * 300) },
        (type: string, object: unknown) => onEvent(type as WatchEventType, object),
        (err: unknown) => done(err),
      ),
  }, () => true);
}

export function createNodeCache(options: { kubeConfig: KubeConfig; clock: Clock; logger?: Logger; isFleetNode: (name: string) => boolean }): NodeCache {
  const nodes = new Map<string, V1Node>();
  /** The resourceVersion of the last write of each node made here. */
  const written = new Map<string, number>();
  const source: ApiserverSource = createApiserverSource({
    listWatch: kubeNodesListWatch(options.kubeConfig),
    nodeName: '*nodes',
    clock: options.clock,
    ...(options.logger ? { logger: options.logger } : {}),
    onUpdate: (update) => {
      const apply = (node: Pod): void => {
        const name = node.metadata?.name ?? '';
        if (options.isFleetNode(name)) nodes.set(name, node as V1Node);
      };
      if (update.delta === undefined) {
        nodes.clear();
        update.pods.forEach(apply);
        return;
      }
      for (const gone of update.delta.removed) {
        const name = gone.metadata?.name ?? '';
        if (nodes.get(name)?.metadata?.uid === gone.metadata?.uid) nodes.delete(name);
      }
      update.delta.changed.forEach(apply);
    },
  });
  const remember = (node: V1Node): V1Node => {
    const name = node.metadata?.name;
    if (name !== undefined) written.set(name, rvNumber(node));
    return node;
  };
  return {
    nodeApi: (core) => ({
      createNode: async (param) => remember(await core.createNode(param)),
      patchNodeStatus: async (...args: Parameters<NodeApi['patchNodeStatus']>) => remember(await core.patchNodeStatus(...args)),
      readNode: async (param) => {
        const cached = nodes.get(param.name);
        if (cached !== undefined && rvNumber(cached) >= (written.get(param.name) ?? 0)) return cached;
        return remember(await core.readNode(param));
      },
    }) as NodeApi,
    start: () => source.start(),
    stop: () => source.stop(),
  };
}
