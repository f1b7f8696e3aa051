import type { KubeObject, ListWatch } from './list-watch.js';
import { withoutManagedFields } from './managed-fields.js';

/**
 * A list and watch whose objects lose `metadata.managedFields` when `trim(object)` says so,
 * before anything keeps them (see src/kube/managed-fields.ts). An event's object without
 * managedFields (a bookmark, an error Status) passes as it is.
 */
export function trimmedListWatch<T extends KubeObject>(listWatch: ListWatch<T>, trim: (object: T) => boolean): ListWatch<T> {
  const trimmed = (object: T): T => (trim(object) ? withoutManagedFields(object) : object);
  return {
    list: async () => {
      const list = await listWatch.list();
      return { ...list, items: list.items.map(trimmed) };
    },
    watch: (resourceVersion, onEvent, done) =>
      listWatch.watch(
        resourceVersion,
        // A Status passed to trim() reads as an object without managedFields, so it goes through whole.
        (type, object) => onEvent(type, typeof object === 'object' && object !== null ? trimmed(object as T) : object),
        done,
      ),
  };
}
