import { createClusterAccess, type ClusterAccess } from './cluster-access.js';
import type { KubeConfigLike } from './kubeconfig.js';
import type { KubeObject, ListWatch, ObjectList, WatchEventType } from './list-watch.js';
import { withoutManagedFields as trimManagedFields } from './managed-fields.js';
import { startWatch } from './watch-stream.js';

export interface KubeListWatchOptions<T> {
  kubeConfig: KubeConfigLike;
  /** The collection to watch, e.g. `/api/v1/pods`. */
  path: string;
  /**
   * The list call, through whichever API client the caller wants it to use (pool, rate
   * limiter), passing each listed object through `keep`: the preparation the watch applies to
   * its objects (`keepEach` for a list read in one piece; src/kube/paged-list.ts applies it
   * page by page).
   */
  list: (keep: (object: T) => T) => Promise<ObjectList<T>>;
  fieldSelector?: string;
  /** Server-side timeout of each watch request: a number, or a function asked per request. */
  timeoutSeconds: number | (() => number);
  /**
   * Turns each object (listed, or watched: ADDED, MODIFIED, DELETED) into the form that is
   * kept, before the consumer sees it; bookmarks and ERROR Statuses pass as they came.
   */
  prepare?: (object: T) => T;
  /**
   * Nothing wants the objects' managedFields: each watch event has them cut from its text
   * before it is parsed (src/kube/managed-fields.ts), and every object, listed or watched, is
   * trimmed before `prepare` sees it (the cut's patterns do not fit every text).
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
  const keep = keepFunction(prepare, withoutManagedFields === true);
  return {
    list: () => options.list(keep ?? same),
    watch: (resourceVersion, onEvent, done) => {
      access ??= createClusterAccess(options.kubeConfig);
      return startWatch(access, {
        path,
        query: { fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: typeof timeoutSeconds === 'number' ? timeoutSeconds : timeoutSeconds() },
        onEvent: keep === undefined ? onEvent : (type, object) => onEvent(type, isObjectEvent(type) && typeof object === 'object' && object !== null ? keep(object as T) : object),
        done,
        withoutManagedFields,
      });
    },
  };
}

/** A list read in one piece, each object passed through `keep`. */
export function keepEach<T>(list: ObjectList<T>, keep: (object: T) => T): ObjectList<T> {
  return { ...list, items: list.items.map(keep) };
}

const same = <T>(object: T): T => object;

function keepFunction<T>(prepare: ((object: T) => T) | undefined, trim: boolean): ((object: T) => T) | undefined {
  if (!trim) return prepare;
  const trimmed = (object: T): T => trimManagedFields(object as KubeObject) as T;
  return prepare === undefined ? trimmed : (object) => prepare(trimmed(object));
}

const isObjectEvent = (type: WatchEventType): boolean => type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED';
