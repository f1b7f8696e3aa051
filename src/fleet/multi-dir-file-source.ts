import { FILE_SOURCE, PodOperation } from '../constants.js';
import type { Pod } from '../pod/types.js';
import { createFileSource, type FileSource, type FileSourceOptions } from '../sources/file-source.js';
import type { PodUpdate } from '../sources/types.js';

/**
 * The `file` source of a fleet node: the template's shared manifest directory and the node's
 * own `<perNodeDir>/<node>/`, each read by the file source `kubelet-pods run` uses, sent on as
 * one SET (their union) on the node's one `file` channel, as if they were one directory. A bad
 * manifest in either is refused by that directory's source alone.
 */
export function createMultiDirFileSource(paths: readonly string[], options: FileSourceOptions): FileSource {
  if (paths.length === 1) return createFileSource({ ...options, path: paths[0]! });
  const latest: (Pod[] | undefined)[] = paths.map(() => undefined);
  const origins: (readonly string[] | undefined)[] = paths.map(() => undefined);
  const forward = (): void => {
    // Wait until every directory has been read once, so the first SET is complete.
    if (latest.some((pods) => pods === undefined)) return;
    const pods = latest.flatMap((p) => p ?? []);
    const allOrigins = origins.every((o) => o !== undefined) ? origins.flatMap((o) => o ?? []) : undefined;
    const update: PodUpdate = { op: PodOperation.SET, source: FILE_SOURCE, pods, ...(allOrigins ? { origins: allOrigins } : {}) };
    options.onUpdate(update);
  };
  const sources = paths.map((path, i) =>
    createFileSource({
      ...options,
      path,
      onUpdate: (update) => {
        latest[i] = update.pods;
        origins[i] = update.origins?.length === update.pods.length ? update.origins : undefined;
        forward();
      },
    }),
  );
  return {
    start: () => sources.forEach((s) => s.start()),
    stop: async () => {
      await Promise.all(sources.map((s) => s.stop()));
    },
    listConfig: async () => {
      await Promise.all(sources.map((s) => s.listConfig()));
    },
    stats: () =>
      sources.map((s) => s.stats()).reduce((a, b) => ({ listings: a.listings + b.listings, filesRead: a.filesRead + b.filesRead })),
  };
}
