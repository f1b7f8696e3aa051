// What the API server shows of a fleet, for the live view of `demo --nodes N`: its Nodes that
// are Ready and the mirror pods bound to them, watched with the admin credential as `kubectl
// get` would see them (not the fleet's own state, so the view checks the fleet from outside).

import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { kubeNodesListWatch } from '../fleet/node-cache.js';
import { kubePodsOnNodes } from '../fleet/pod-fan-out.js';
import { isMirrorPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { createApiserverSource } from '../sources/apiserver-source.js';
import { realClock, type Clock } from '../time/clock.js';

/** Nodes and mirror pods of the fleet as the API server has them, kept current by two list+watches. */
export interface FleetObjects {
  start(): void;
  stop(): Promise<void>;
  counts(): { nodesReady: number; mirrors: number; running: number };
}

export function watchFleetObjects(options: { kubeConfig: KubeConfig; isFleetNode: (name: string) => boolean; clock?: Clock }): FleetObjects {
  const clock = options.clock ?? realClock;
  let nodes: readonly Pod[] = [];
  let pods: readonly Pod[] = [];
  // Each source hands over the full current set on every change; counting waits for a draw.
  const nodeSource = createApiserverSource({ listWatch: kubeNodesListWatch(options.kubeConfig), nodeName: '*nodes', clock, onUpdate: (u) => (nodes = u.pods) });
  const podSource = createApiserverSource({
    listWatch: kubePodsOnNodes(options.kubeConfig, options.kubeConfig.makeApiClient(CoreV1Api), 300 + Math.floor(Math.random() * 300)),
    nodeName: '*pods',
    clock,
    onUpdate: (u) => (pods = u.pods),
  });
  return {
    start() {
      nodeSource.start();
      podSource.start();
    },
    async stop() {
      await Promise.all([nodeSource.stop(), podSource.stop()]);
    },
    counts() {
      const nodesReady = nodes.filter(
        (n) => options.isFleetNode(n.metadata?.name ?? '') && (n as V1Node).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      let mirrors = 0;
      let running = 0;
      for (const pod of pods) {
        if (!options.isFleetNode(pod.spec?.nodeName ?? '') || !isMirrorPod(pod)) continue;
        mirrors++;
        if (pod.status?.phase === 'Running') running++;
      }
      return { nodesReady, mirrors, running };
    },
  };
}
