import type { V1Node } from '@kubernetes/client-node';
import { createApiClients } from '../kube/api-clients.js';
import type { KubeConfigLike as KubeConfig } from '../kube/kubeconfig.js';
import { unlimited } from '../kube/rate-limiter.js';
import { kpError } from '../errors.js';
import { keepEach, kubeListWatch } from '../kube/kube-list-watch.js';
import type { ListWatch } from '../kube/list-watch.js';
import { createReflector, type Reflector, type ReflectorWording } from '../kube/reflector.js';
import { randomWatchTimeoutSeconds } from '../kube/watch-timeout.js';
import type { Logger } from '../logger.js';
import type { NodeApi } from '../node/node-registration.js';
import type { NodeWatch, NodeWatchListener } from '../node/node-watch.js';
import type { Clock } from '../time/clock.js';
import { createSharedValues } from '../values/shared-values.js';

/**
 * One watch of the Nodes for the whole fleet. Node registration reads its Node back every
 * 10 s, as the kubelet does with a GET, which for a fleet of many nodes is a steady stream of
 * GETs for objects the process can simply watch. `nodeApi(core)` answers `readNode` from the
 * watch when it holds a version at least as new as the last one this process wrote (so a read
 * never goes back in time), and sends a GET otherwise; creates and status patches go to the
 * API server.
 *
 * The watch is a reflector (src/kube/reflector.ts: retries, 410 relists, watchdog) over a list
 * and watch of Nodes. The same watch is each node's watch of its own Node (`nodeWatch`), so a
 * Node deleted is seen by its agent at once without a watch per node.
 */
export interface NodeCache {
  nodeApi(core: NodeApi): NodeApi;
  /** The node `name`'s view of its own Node, from the one watch (node registration's `watch`). */
  nodeWatch(name: string): NodeWatch;
  start(): void;
  stop(): Promise<void>;
}

const rvNumber = (node: V1Node | undefined): number => Number(node?.metadata?.resourceVersion ?? -1);

/**
 * A list and watch of every Node, kept without their managedFields (src/kube/managed-fields.ts):
 * the node cache's, and the demo's view of a fleet. Each watch request asks for a timeout of
 * its own.
 */
export function kubeNodesListWatch(kubeConfig: KubeConfig): ListWatch<V1Node> {
  const api = createApiClients(kubeConfig, unlimited).core;
  return kubeListWatch({ kubeConfig, path: '/api/v1/nodes', list: (keep) => api.listNode().then((list) => keepEach(list, keep)), timeoutSeconds: () => randomWatchTimeoutSeconds(), withoutManagedFields: true });
}

/** How a reflector over the Nodes words its failures. */
export const nodeReflectorWording: ReflectorWording = {
  logFields: {},
  listFailed: 'failed to list nodes',
  listError: (reason) => kpError('KP_ERR_FLEET_NODE_WATCH', ['list', reason]),
  watchFailed: 'node watch failed, retrying',
  watchError: (reason) => kpError('KP_ERR_FLEET_NODE_WATCH', ['watch', reason]),
};

/**
 * Told of every Node the watch shows, the fleet's or not (node adoption,
 * src/fleet/node-adoption.ts): `seen` before the cache keeps it, so that a Node adopted there
 * is kept at once; `gone` for a fleet node deleted (or missing from a relist), after its own
 * node heard of it, so that the node stops writing before it is released.
 */
export interface NodeObserver {
  seen(node: V1Node): void;
  gone(name: string, uid: string | undefined): void;
}

export function createNodeCache(options: {
  kubeConfig: KubeConfig;
  clock: Clock;
  logger?: Logger;
  isFleetNode: (name: string) => boolean;
  observer?: NodeObserver;
  /** The list and watch of every Node; `kubeNodesListWatch(kubeConfig)` by default (tests script one). */
  listWatch?: ListWatch<V1Node>;
}): NodeCache {
  const nodes = new Map<string, V1Node>();
  // Each node's own-Node listener; told only once a list has said what exists.
  const watchers = new Map<string, NodeWatchListener>();
  let listed = false;
  // How far the watch has seen: what a node hearing "no Node" may compare its own with.
  let seenVersion = '';
  /** The resourceVersion of the last write of each node made here. */
  const written = new Map<string, number>();
  // The Nodes kept here and those the writes answer, which node registration keeps until its
  // next read, hold their equal parts once: the strings (messages, times) and the objects that
  // nodes of one template have alike (node info, capacity, allocatable, endpoints, spec). Each
  // Node is its name's own, so a part only it has, version after version, is not tabled.
  const values = createSharedValues();
  const keep = (node: V1Node): void => {
    const name = node.metadata?.name ?? '';
    if (options.isFleetNode(name)) nodes.set(name, values.share(node, name));
    else if (nodes.delete(name)) written.delete(name); // no longer the fleet's (an adopted node released)
  };
  const observer = options.observer;
  const reflector: Reflector = createReflector<V1Node>({
    listWatch: options.listWatch ?? kubeNodesListWatch(options.kubeConfig),
    onList: (items, resourceVersion) => {
      const before = observer !== undefined ? new Map(nodes) : undefined;
      if (observer !== undefined) items.forEach((n) => observer.seen(n));
      nodes.clear();
      items.forEach(keep);
      listed = true;
      seenVersion = resourceVersion;
      const listedNames = before !== undefined ? new Set(items.map((n) => n.metadata?.name)) : undefined;
      for (const [name, tell] of watchers) if (nodes.has(name) || !listedNames?.has(name)) tell(nodes.get(name), seenVersion);
      for (const [name, old] of before ?? []) if (!nodes.has(name)) observer?.gone(name, old.metadata?.uid);
    },
    onEvent: (type, node) => {
      const name = node.metadata?.name ?? '';
      if (type !== 'DELETED') {
        observer?.seen(node);
        keep(node);
      } else if (nodes.get(name)?.metadata?.uid === node.metadata?.uid) {
        nodes.delete(name);
        written.delete(name); // any Node of this name created again is newer than our writes
      }
      seenVersion = node.metadata?.resourceVersion ?? seenVersion;
      // A Node that exists but is no longer the fleet's (an adopted node released): its node is
      // being stopped, and is not told that the Node is gone.
      if (type === 'DELETED' || options.isFleetNode(name)) watchers.get(name)?.(nodes.get(name), seenVersion);
      if (type === 'DELETED') observer?.gone(name, node.metadata?.uid);
    },
    wording: nodeReflectorWording,
    clock: options.clock,
    logger: options.logger,
  });
  const remember = (node: V1Node): V1Node => {
    const name = node.metadata?.name;
    if (name !== undefined) written.set(name, rvNumber(node));
    return values.share(node, name);
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
    nodeWatch: (name) => ({
      start(listener) {
        watchers.set(name, listener);
        if (listed) listener(nodes.get(name), seenVersion);
      },
      async stop() {
        watchers.delete(name);
      },
    }),
    start: () => reflector.start(),
    stop: () => reflector.stop(),
  };
}
