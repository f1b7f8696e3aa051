import type { V1ListMeta, V1ObjectMeta } from '@kubernetes/client-node';

/** An API object as the list/watch plumbing sees it: only its metadata is read. */
export interface KubeObject {
  metadata?: V1ObjectMeta;
}

/** What a list call returns: the objects, and the resourceVersion to watch from. */
export interface ObjectList<T> {
  metadata?: V1ListMeta;
  items: T[];
}

/** What a watch stream delivers, as client-node's Watch passes it on. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** An open watch request. */
export interface WatchHandle {
  abort(): void;
}

/**
 * The list and watch calls a reflector needs, over one kind of object, so tests can replace the
 * API server. `watch` resolves once the request has been sent and calls `done` exactly once when
 * the stream ends, with the error if it failed. An HTTP failure must be readable by
 * src/kube/api-error.ts (an ApiException, or an object with a numeric `code`): that is how a
 * 410 Gone is told from other failures.
 *
 * A watch event's object stays `unknown` here because that is what the wire gives: a `T` for
 * ADDED, MODIFIED and DELETED, a `T` with only its resourceVersion for BOOKMARK, a Status for
 * ERROR. The reflector tells them apart and hands its consumer typed objects.
 */
export interface ListWatch<T> {
  list(): Promise<ObjectList<T>>;
  watch(
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<WatchHandle>;
}
