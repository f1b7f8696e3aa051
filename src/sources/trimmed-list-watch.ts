import { withoutManagedFields } from '../kube/managed-fields.js';
import type { Pod } from '../pod/types.js';
import type { PodListWatch } from './apiserver-source.js';

/**
 * A list and watch whose objects lose `metadata.managedFields` when `trim(object)` says so,
 * before anything keeps them (see src/kube/managed-fields.ts). An event's object without
 * managedFields (a bookmark, an error Status) passes as it is.
 */
export function trimmedListWatch(listWatch: PodListWatch, trim: (object: Pod) => boolean): PodListWatch {
  const trimmed = (object: Pod): Pod => (trim(object) ? withoutManagedFields(object) : object);
  return {
    list: async () => {
      const list = await listWatch.list();
      return { ...list, items: list.items.map(trimmed) };
    },
    watch: (resourceVersion, onEvent, done) =>
      listWatch.watch(
        resourceVersion,
        (type, object) => onEvent(type, typeof object === 'object' && object !== null ? trimmed(object as Pod) : object),
        done,
      ),
  };
}
