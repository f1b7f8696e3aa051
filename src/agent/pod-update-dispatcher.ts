import { PodOperation } from '../constants.js';
import type { Logger } from '../logger.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import type { SourcesReady } from '../sources/sources-ready.js';
import type { PodUpdate } from '../sources/types.js';

export interface PodUpdateDispatcherOptions {
  podManager: PodManager;
  sourcesReady: SourcesReady;
  /** Told which pods an applied update carried (static and mirror pods alike). */
  onPodsChanged: (pods: readonly Pod[], op: PodOperation) => void;
  logger: Logger;
}

/**
 * The agent's side of the kubelet's sync loop (syncLoopIteration): applies each merged
 * update to the pod manager, then marks its source as seen. ADD, UPDATE, DELETE and RECONCILE
 * upsert (a graceful delete is just an update); REMOVE removes; a SET is not expected from an
 * incremental merger and is ignored. Mirror pods are indexed like any pod and never run.
 */
export function createPodUpdateDispatcher(options: PodUpdateDispatcherOptions): (update: PodUpdate) => void {
  const { podManager, sourcesReady, onPodsChanged, logger } = options;
  return (update) => {
    switch (update.op) {
      case PodOperation.ADD:
      case PodOperation.UPDATE:
      case PodOperation.DELETE:
      case PodOperation.RECONCILE:
        for (const pod of update.pods) podManager.updatePod(pod);
        break;
      case PodOperation.REMOVE:
        for (const pod of update.pods) podManager.removePod(pod);
        break;
      default:
        logger.error({ source: update.source, op: update.op }, 'pod update kind not supported by the agent, ignored');
        sourcesReady.addSource(update.source); // as the kubelet: the source counts as seen anyway
        return;
    }
    if (update.pods.length > 0) onPodsChanged(update.pods, update.op);
    sourcesReady.addSource(update.source);
  };
}
