import { watchStaticPodPath, type PathWatcher, type WatchListener, type WatchStaticPodPath } from '../sources/file-watch.js';

/**
 * One fs.watch per watched path for the whole process: every node of a fleet reads the same
 * shared manifest directory, and 1,000 inotify watches on one directory would cost 1,000
 * watch descriptors and wake 1,000 callbacks per event for nothing more. Listeners of the same
 * path share one watcher, closed when the last of them leaves.
 */
export interface FileWatchHub {
  readonly watchPath: WatchStaticPodPath;
  /** Open watchers (one per distinct path), for tests and metrics. */
  size(): number;
}

interface Shared {
  watcher: PathWatcher;
  listeners: Set<WatchListener>;
  errorHandlers: Set<(err: Error) => void>;
}

export function createFileWatchHub(watch: WatchStaticPodPath = watchStaticPodPath): FileWatchHub {
  const shared = new Map<string, Shared>();
  return {
    watchPath(root, isDirectory, listener, onError) {
      const key = `${isDirectory ? 'd' : 'f'}:${root}`;
      let entry = shared.get(key);
      if (entry === undefined) {
        const listeners = new Set<WatchListener>();
        const errorHandlers = new Set<(err: Error) => void>();
        // Throws like watchStaticPodPath when the path cannot be watched; nothing is kept then.
        const watcher = watch(
          root,
          isDirectory,
          (name) => {
            for (const l of [...listeners]) l(name);
          },
          (err) => {
            // The watcher is dead: every source re-arms its own, which builds a new shared one.
            shared.delete(key);
            for (const h of [...errorHandlers]) h(err);
          },
        );
        entry = { watcher, listeners, errorHandlers };
        shared.set(key, entry);
      }
      const mine = entry;
      mine.listeners.add(listener);
      mine.errorHandlers.add(onError);
      let closed = false;
      return {
        close() {
          if (closed) return;
          closed = true;
          mine.listeners.delete(listener);
          mine.errorHandlers.delete(onError);
          if (mine.listeners.size === 0) {
            mine.watcher.close();
            if (shared.get(key) === mine) shared.delete(key);
          }
        },
      };
    },
    size: () => shared.size,
  };
}
