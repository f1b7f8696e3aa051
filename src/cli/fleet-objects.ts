// What the API server shows of a fleet, for the live view of `demo --nodes N`: its Nodes that
// are Ready and the mirror pods bound to them, watched with the admin credential as `kubectl
// get` would see them (not the fleet's own state, so the view checks the fleet from outside).

import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { kubeNodesListWatch, nodeReflectorWording } from '../fleet/node-cache.js';
import { kubePodsOnNodes } from '../fleet/pod-fan-out.js';
import type { KubeObject, ListWatch } from '../kube/list-watch.js';
import { createReflector, type Reflector, type ReflectorWording } from '../kube/reflector.js';
import { isMirrorPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { podReflectorWording } from '../sources/pod-list-watch.js';
import { realClock, type Clock } from '../time/clock.js';
import { objectKey } from '../values/object-key.js';

/** Nodes and mirror pods of the fleet as the API server has them, kept current by two list+watches. */
export interface FleetObjects {
  start(): void;
  stop(): Promise<void>;
  counts(): { nodesReady: number; mirrors: number; running: number };
}

export function watchFleetObjects(options: { kubeConfig: KubeConfig; isFleetNode: (name: string) => boolean; clock?: Clock }): FleetObjects {
  const clock = options.clock ?? realClock;
  const nodes = new Map<string, V1Node>();
  const pods = new Map<string, Pod>();
  const nodeWatch = watchInto(nodes, kubeNodesListWatch(options.kubeConfig), nodeReflectorWording, clock);
  const podWatch = watchInto(pods, kubePodsOnNodes(options.kubeConfig, options.kubeConfig.makeApiClient(CoreV1Api)), podReflectorWording('*pods'), clock);
  return {
    start() {
      nodeWatch.start();
      podWatch.start();
    },
    async stop() {
      await Promise.all([nodeWatch.stop(), podWatch.stop()]);
    },
    counts() {
      const nodesReady = [...nodes.values()].filter(
        (n) => options.isFleetNode(n.metadata?.name ?? '') && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      let mirrors = 0;
      let running = 0;
      for (const pod of pods.values()) {
        if (!options.isFleetNode(pod.spec?.nodeName ?? '') || !isMirrorPod(pod)) continue;
        mirrors++;
        if (pod.status?.phase === 'Running') running++;
      }
      return { nodesReady, mirrors, running };
    },
  };
}

/** Keeps `store` equal to what the API server holds, keyed `<namespace>/<name>`. */
function watchInto<T extends KubeObject>(store: Map<string, T>, listWatch: ListWatch<T>, wording: ReflectorWording, clock: Clock): Reflector {
  return createReflector<T>({
    listWatch,
    wording,
    clock,
    onList: (items) => {
      store.clear();
      for (const item of items) store.set(objectKey(item), item);
    },
    onEvent: (type, item) => {
      if (type === 'DELETED') store.delete(objectKey(item));
      else store.set(objectKey(item), item);
    },
  });
}
