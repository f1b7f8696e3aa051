// What the API server shows of the demo's nodes, for its live views: the Nodes and every pod,
// watched with the admin credential as `kubectl get` (and kube-scheduler) would see them, not
// the agent's or fleet's own state, so the views check the nodes from outside. From them: Nodes
// Ready and the mirror pods bound to the demo's nodes (the fleet's progress), and the
// scheduler's accounting of those nodes (scheduling-view.ts).

import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Deployment, type V1Node } from '@kubernetes/client-node';
import { kubeNodesListWatch, nodeReflectorWording } from '../fleet/node-cache.js';
import { keepEach, kubeListWatch } from '../kube/kube-list-watch.js';
import type { KubeObject, ListWatch } from '../kube/list-watch.js';
import { createReflector, type Reflector, type ReflectorWording } from '../kube/reflector.js';
import { randomWatchTimeoutSeconds } from '../kube/watch-timeout.js';
import { isMirrorPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { podReflectorWording } from '../sources/pod-list-watch.js';
import { realClock, type Clock } from '../time/clock.js';
import { objectKey } from '../values/object-key.js';
import { schedulingSnapshot, type SchedulingSnapshot } from './scheduling-view.js';

/** Nodes and pods as the API server has them, kept current by two list+watches. */
export interface DemoObjects {
  start(): void;
  stop(): Promise<void>;
  /** The demo's Nodes that are Ready, the mirror pods bound to them, and of those the Running ones. */
  counts(): { nodesReady: number; mirrors: number; running: number };
  /**
   * The scheduler's accounting of the demo's nodes, and the Deployment's pods if the demo runs
   * one: as the API server has the Deployment (a `kubectl scale` shows), the manifest's until
   * it is created; none once it was deleted.
   */
  scheduling(): SchedulingSnapshot;
}

/**
 * Watches every Node and every pod (bound or not: a pod of the demo's Deployment shows before
 * the scheduler places it), and the demo's Deployment if it has one. `isDemoNode` picks the
 * nodes the demo runs.
 */
export function watchDemoObjects(options: {
  kubeConfig: KubeConfig;
  isDemoNode: (name: string) => boolean;
  deployment?: V1Deployment | undefined;
  clock?: Clock;
}): DemoObjects {
  const clock = options.clock ?? realClock;
  const nodes = new Map<string, V1Node>();
  const pods = new Map<string, Pod>();
  const deployments = new Map<string, V1Deployment>();
  let deploymentSeen = false;
  const core = options.kubeConfig.makeApiClient(CoreV1Api);
  const allPods = kubeListWatch<Pod>({
    kubeConfig: options.kubeConfig,
    path: '/api/v1/pods',
    list: (keep) => core.listPodForAllNamespaces().then((list) => keepEach(list, keep)),
    timeoutSeconds: () => randomWatchTimeoutSeconds(),
    withoutManagedFields: true,
  });
  const nodeWatch = watchInto(nodes, kubeNodesListWatch(options.kubeConfig), nodeReflectorWording, clock);
  const podWatch = watchInto(pods, allPods, podReflectorWording('*pods'), clock);
  const watches = [nodeWatch, podWatch];
  const d = options.deployment;
  if (d !== undefined) {
    const namespace = d.metadata?.namespace ?? 'default';
    const fieldSelector = `metadata.name=${d.metadata?.name ?? ''}`;
    const apps = options.kubeConfig.makeApiClient(AppsV1Api);
    const listWatch = kubeListWatch<V1Deployment>({
      kubeConfig: options.kubeConfig,
      path: `/apis/apps/v1/namespaces/${namespace}/deployments`,
      fieldSelector,
      list: (keep) => apps.listNamespacedDeployment({ namespace, fieldSelector }).then((list) => keepEach(list, keep)),
      timeoutSeconds: () => randomWatchTimeoutSeconds(),
      withoutManagedFields: true,
    });
    const wording: ReflectorWording = {
      logFields: { deployment: `${namespace}/${d.metadata?.name ?? ''}` },
      listFailed: 'failed to list the deployment',
      listError: (reason) => new Error(`listing the demo's Deployment: ${reason}`),
      watchFailed: 'deployment watch failed, retrying',
      watchError: (reason) => new Error(`watching the demo's Deployment: ${reason}`),
    };
    watches.push(watchInto(deployments, listWatch, wording, clock, () => (deploymentSeen ||= deployments.size > 0)));
  }
  return {
    start() {
      for (const w of watches) w.start();
    },
    async stop() {
      await Promise.all(watches.map((w) => w.stop()));
    },
    counts() {
      const nodesReady = [...nodes.values()].filter(
        (n) => options.isDemoNode(n.metadata?.name ?? '') && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      let mirrors = 0;
      let running = 0;
      for (const pod of pods.values()) {
        if (!options.isDemoNode(pod.spec?.nodeName ?? '') || !isMirrorPod(pod)) continue;
        mirrors++;
        if (pod.status?.phase === 'Running') running++;
      }
      return { nodesReady, mirrors, running };
    },
    scheduling() {
      const live = deployments.values().next().value;
      const deployment = live ?? (deploymentSeen ? undefined : d);
      return schedulingSnapshot({ nodes: nodes.values(), pods: pods.values(), isDemoNode: options.isDemoNode, deployment });
    },
  };
}

/** Keeps `store` equal to what the API server holds, keyed `<namespace>/<name>`; `changed` after each change. */
function watchInto<T extends KubeObject>(store: Map<string, T>, listWatch: ListWatch<T>, wording: ReflectorWording, clock: Clock, changed?: () => void): Reflector {
  return createReflector<T>({
    listWatch,
    wording,
    clock,
    onList: (items) => {
      store.clear();
      for (const item of items) store.set(objectKey(item), item);
      changed?.();
    },
    onEvent: (type, item) => {
      if (type === 'DELETED') store.delete(objectKey(item));
      else store.set(objectKey(item), item);
      changed?.();
    },
  });
}
