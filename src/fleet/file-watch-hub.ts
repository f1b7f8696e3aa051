import type { PathReading, ShareReading } from '../sources/file-source.js';
import { watchStaticPodPath, type PathWatcher, type WatchListener, type WatchStaticPodPath } from '../sources/file-watch.js';
import { realClock, type Clock } from '../time/clock.js';

/**
 * One fs.watch per watched path for the whole process: every node of a fleet reads the same
 * shared manifest directory, and 1,000 inotify watches on one directory would cost 1,000
 * watch descriptors and wake 1,000 callbacks per event for nothing more. Listeners of the same
 * path share one watcher, closed when the last of them leaves.
 */
export interface FileWatchHub {
  readonly watchPath: WatchStaticPodPath;
  /**
   * The re-lists of one path, shared: every node re-lists the shared directory every 20 s
   * (fileCheckFrequency), which at 1,000 nodes is a stat of the directory, a readdir and a stat
   * per manifest 50 times a second, all to find what one listing found. A listing of a path
   * that started at most `shareMs` ago is handed to the next source that lists it, as long as
   * the path is watched here and no watch event for it has arrived since that listing started;
   * a change the watch saw therefore always gets a fresh listing, and one it cannot see (a
   * symlink's target changed elsewhere) is noticed at most `shareMs` later than it would be.
   */
  readonly shareReading: ShareReading;
  /** Open watchers (one per distinct path), for tests and metrics. */
  size(): number;
}

interface Shared {
  watcher: PathWatcher;
  listeners: Set<WatchListener>;
  errorHandlers: Set<(err: Error) => void>;
}

export interface FileWatchHubOptions {
  /** How long a listing may be handed out after it started; 1 s by default. */
  shareMs?: number;
  clock?: Clock;
}

export function createFileWatchHub(watch: WatchStaticPodPath = watchStaticPodPath, options: FileWatchHubOptions = {}): FileWatchHub {
  const shared = new Map<string, Shared>();
  const shareMs = options.shareMs ?? 1000;
  const clock = options.clock ?? realClock;
  /** The latest listing of each path, until a watch event for it or its watcher's end. */
  const readings = new Map<string, { started: number; reading: Promise<PathReading> }>();
  const watched = (root: string): boolean => shared.has(`d:${root}`) || shared.has(`f:${root}`);
  return {
    shareReading(root, read) {
      const now = clock.monotonic();
      const latest = readings.get(root);
      if (latest !== undefined && now - latest.started <= shareMs) return latest.reading;
      const reading = read();
      // A listing that began before the watch did could miss a change no event will report.
      if (!watched(root)) return reading;
      const entry = { started: now, reading };
      readings.set(root, entry);
      // A failed listing is not handed on: the next source tries for itself.
      reading.catch(() => {
        if (readings.get(root) === entry) readings.delete(root);
      });
      return reading;
    },
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
            // Before the sources hear of it: a listing they start now must be a fresh one.
            readings.delete(root);
            for (const l of [...listeners]) l(name);
          },
          (err) => {
            // The watcher is dead: every source re-arms its own, which builds a new shared one.
            shared.delete(key);
            readings.delete(root);
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
            if (!watched(root)) readings.delete(root);
          }
        },
      };
    },
    size: () => shared.size,
  };
}
