import { createClusterAccess, type ClusterAccess } from './cluster-access.js';
import type { KubeConfigLike } from './kubeconfig.js';
import type { ListWatch, ObjectList, WatchEventType } from './list-watch.js';
import { startWatch } from './watch-stream.js';

export interface KubeListWatchOptions<T> {
  kubeConfig: KubeConfigLike;
  /** The collection to watch, e.g. `/api/v1/pods`. */
  path: string;
  /** The list call, through whichever API client the caller wants it to use (pool, rate limiter). */
  list: () => Promise<ObjectList<T>>;
  fieldSelector?: string;
  /** Server-side timeout of each watch request: a number, or a function asked per request. */
  timeoutSeconds: number | (() => number);
  /**
   * Turns each watched object (ADDED, MODIFIED, DELETED) into the form that is kept, before the
   * consumer sees it; bookmarks and ERROR Statuses pass as they came. `list` applies the same
   * itself (src/kube/paged-list.ts does it page by page).
   */
  prepare?: (object: T) => T;
  /**
   * The watched objects' managedFields are never wanted: they are cut from each event's text
   * before it is parsed (the list is not affected; `prepare` trims its objects).
   */
  withoutManagedFields?: boolean;
}

/**
 * A list and watch of one kind against the API server: the list through the caller's client,
 * the watch on one long-lived connection read as JSON lines (src/kube/watch-stream.ts), with
 * bookmarks and a server-side timeout. A refused watch request (a 410 among others) ends in an
 * `ApiException` with its status, which src/kube/api-error.ts reads as it reads a failed call.
 */
export function kubeListWatch<T>(options: KubeListWatchOptions<T>): ListWatch<T> {
  let access: ClusterAccess | undefined;
  const { path, fieldSelector, timeoutSeconds, prepare, withoutManagedFields } = options;
  return {
    list: options.list,
    watch: (resourceVersion, onEvent, done) => {
      access ??= createClusterAccess(options.kubeConfig);
      return startWatch(access, {
        path,
        query: { fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: typeof timeoutSeconds === 'number' ? timeoutSeconds : timeoutSeconds() },
        onEvent: prepare === undefined ? onEvent : (type, object) => onEvent(type, isObjectEvent(type) && typeof object === 'object' && object !== null ? prepare(object as T) : object),
        done,
        withoutManagedFields,
      });
    },
  };
}

const isObjectEvent = (type: WatchEventType): boolean => type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED';
