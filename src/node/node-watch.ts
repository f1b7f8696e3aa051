import type { V1Node } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { keepEach, kubeListWatch } from '../kube/kube-list-watch.js';
import type { KubeConfigLike as KubeConfig } from '../kube/kubeconfig.js';
import type { ListWatch } from '../kube/list-watch.js';
import { createReflector, type ReflectorWording } from '../kube/reflector.js';
import type { CoreV1Api } from '../kube/typed-apis.js';
import { randomWatchTimeoutSeconds } from '../kube/watch-timeout.js';
import type { Logger } from '../logger.js';
import type { Clock } from '../time/clock.js';

/**
 * This node's own Node as a watch shows it, as the kubelet's node informer does: node
 * registration hears of a deletion (and of a Node created again) the moment it happens, where
 * its status loop reads the Node only every `nodeStatusUpdateFrequency`.
 */
export interface NodeWatch {
  /**
   * Starts watching; `listener` hears the Node after each (re)list and each change: the
   * object, or undefined when there is none (deleted, or not created yet), and the
   * resourceVersion the watch has seen up to (the list's, or the event's object's): a list
   * answered after the agent registered its Node may have been taken before.
   */
  start(listener: NodeWatchListener): void;
  stop(): Promise<void>;
}

export type NodeWatchListener = (node: V1Node | undefined, resourceVersion: string) => void;

export interface NodeWatchOptions {
  nodeName: string;
  /** The list and watch of this Node alone (`kubeOwnNodeListWatch`; a fake in tests). */
  listWatch: ListWatch<V1Node>;
  clock?: Clock;
  logger?: Logger;
}

/** A reflector over the one Node named `nodeName`. */
export function createNodeWatch(options: NodeWatchOptions): NodeWatch {
  const { nodeName } = options;
  let listener: NodeWatchListener | undefined;
  const ours = (node: V1Node): boolean => node.metadata?.name === nodeName;
  const reflector = createReflector<V1Node>({
    listWatch: options.listWatch,
    onList: (items, resourceVersion) => listener?.(items.find(ours), resourceVersion),
    onEvent: (type, node) => {
      if (ours(node)) listener?.(type === 'DELETED' ? undefined : node, node.metadata?.resourceVersion ?? '');
    },
    wording: nodeWatchWording(nodeName),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  return {
    start(l) {
      listener = l;
      reflector.start();
    },
    async stop() {
      await reflector.stop();
      listener = undefined;
    },
  };
}

/**
 * The list and watch of the Node `nodeName` alone (`fieldSelector=metadata.name=<node>`, which
 * the Node authorizer allows a node for its own Node): the list through `core` (the agent's
 * rate-limited client), kept without managedFields.
 */
export function kubeOwnNodeListWatch(kubeConfig: KubeConfig, core: Pick<CoreV1Api, 'listNode'>, nodeName: string): ListWatch<V1Node> {
  const fieldSelector = `metadata.name=${nodeName}`;
  return kubeListWatch({
    kubeConfig,
    path: '/api/v1/nodes',
    fieldSelector,
    list: (keep) => core.listNode({ fieldSelector }).then((list) => keepEach(list, keep)),
    timeoutSeconds: () => randomWatchTimeoutSeconds(),
    withoutManagedFields: true,
  });
}

function nodeWatchWording(nodeName: string): ReflectorWording {
  return {
    logFields: { node: nodeName },
    listFailed: 'failed to list own node',
    listError: (reason) => kpError('KP_ERR_NODE_WATCH', [nodeName, 'list', reason]),
    watchFailed: 'own node watch failed, retrying',
    watchError: (reason) => kpError('KP_ERR_NODE_WATCH', [nodeName, 'watch', reason]),
  };
}
