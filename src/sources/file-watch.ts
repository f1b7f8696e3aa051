import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/**
 * What the file source is told by the watcher: a manifest path whose entry changed in some
 * way (created, written, chmod-ed, removed or renamed), or `null` when the watcher cannot
 * name the entry (the source then re-lists everything).
 */
export type WatchListener = (name: string | null) => void;

export interface PathWatcher {
  close(): void;
}

/** The shape of `watchStaticPodPath`, for sources that are given another way to watch. */
export type WatchStaticPodPath = (
  root: string,
  isDirectory: boolean,
  listener: WatchListener,
  onError: (err: Error) => void,
) => PathWatcher;

/**
 * Watches the static pod path with fs.watch (inotify on Linux).
 *
 * - Directory: events name its direct entries; names starting with `.` (editor swap files)
 *   are dropped here, as the kubelet does.
 * - Single file: the parent directory is watched and filtered to the file's name, so a
 *   rename-based save or a file created later is seen; the file itself is watched too when
 *   it exists, so that writes through a symlink to another directory are seen. That second
 *   watch is re-armed after every event (a rename-save replaces the inode).
 *
 * Symlink targets of directory entries live elsewhere and are not watched: the periodic
 * re-list is the backstop for them. Throws when the watch cannot be set up (path missing).
 */
export function watchStaticPodPath(
  root: string,
  isDirectory: boolean,
  listener: WatchListener,
  onError: (err: Error) => void,
): PathWatcher {
  if (isDirectory) {
    const watcher = watch(root, { persistent: false }, (_event, filename) => {
      if (filename === null || filename === undefined) return listener(null);
      const name = filename.toString();
      if (name.startsWith('.')) return;
      listener(name);
    });
    watcher.on('error', onError);
    return { close: () => watcher.close() };
  }

  const name = basename(root);
  let fileWatcher: FSWatcher | undefined;
  let closed = false;
  const armFileWatch = (): void => {
    fileWatcher?.close();
    fileWatcher = undefined;
    if (closed) return;
    try {
      fileWatcher = watch(root, { persistent: false }, () => {
        listener(name);
        // A rename-save leaves this watch on the old inode: re-arm on the new one.
        setImmediate(armFileWatch);
      });
      fileWatcher.on('error', () => {
        fileWatcher?.close();
        fileWatcher = undefined;
      });
    } catch {
      // Not there (yet), or a dangling symlink: the parent watch and the re-list cover it.
    }
  };
  const parentWatcher = watch(dirname(root), { persistent: false }, (_event, filename) => {
    if (filename !== null && filename !== undefined && filename.toString() !== name) return;
    listener(name);
    armFileWatch();
  });
  parentWatcher.on('error', onError);
  armFileWatch();
  return {
    close: () => {
      closed = true;
      fileWatcher?.close();
      parentWatcher.close();
    },
  };
}
