import { ApiException, Watch, type KubeConfig } from '@kubernetes/client-node';
import type { ListWatch, ObjectList, WatchEventType } from './list-watch.js';

export interface KubeListWatchOptions<T> {
  kubeConfig: KubeConfig;
  /** The collection to watch, e.g. `/api/v1/pods`. */
  path: string;
  /** The list call, through whichever API client the caller wants it to use (pool, rate limiter). */
  list: () => Promise<ObjectList<T>>;
  fieldSelector?: string;
  /** Server-side timeout of each watch request: a number, or a function asked per request. */
  timeoutSeconds: number | (() => number);
}

/**
 * A list and watch of one kind against the API server: the list through the caller's client,
 * the watch on one long-lived connection of client-node's `Watch`, with bookmarks and a
 * server-side timeout.
 */
export function kubeListWatch<T>(options: KubeListWatchOptions<T>): ListWatch<T> {
  const watcher = new Watch(options.kubeConfig);
  const { path, fieldSelector, timeoutSeconds } = options;
  const selector = fieldSelector !== undefined ? { fieldSelector } : {};
  return {
    list: options.list,
    watch: (resourceVersion, onEvent, done) =>
      watcher.watch(
        path,
        { ...selector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: typeof timeoutSeconds === 'number' ? timeoutSeconds : timeoutSeconds() },
        // client-node passes the event type as a plain string.
        (type: string, object: unknown) => onEvent(type as WatchEventType, object),
        (err: unknown) => done(asApiException(err)),
      ),
  };
}

/**
 * client-node's Watch reports a refused watch request (a 410 among others) as a plain Error
 * with `statusCode`, where its API calls throw an ApiException: turned into the latter here, so
 * that src/kube/api-error.ts reads both alike.
 */
function asApiException(err: unknown): unknown {
  const statusCode = (err as { statusCode?: unknown } | null | undefined)?.statusCode;
  if (typeof statusCode !== 'number') return err;
  return new ApiException(statusCode, err instanceof Error ? err.message : String(err), undefined, {});
}
