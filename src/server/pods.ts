import type { V1PodList, V1PodStatus } from '@kubernetes/client-node';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import { send, type Route } from './server.js';

export interface PodsRouteOptions {
  podManager: Pick<PodManager, 'getPods'>;
  /**
   * The status to show for a pod (e.g. the mirror status writer's `getPodStatus`); when it
   * returns undefined the pod is listed as stored.
   */
  statusFor?: (pod: Pod) => V1PodStatus | undefined;
}

/**
 * `/pods` → a v1 PodList of the pods the node runs (static and API pods; mirror pods are
 * not pods the node runs and are left out), like the kubelet's read-only port.
 */
export function podsRoute(options: PodsRouteOptions): Route {
  return {
    path: '/pods',
    handle: (_req, res) => {
      const items = options.podManager.getPods().map((pod) => {
        const status = options.statusFor?.(pod);
        return status === undefined ? pod : { ...pod, status };
      });
      const list: V1PodList = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items };
      send(res, 200, 'application/json', JSON.stringify(list));
    },
  };
}
