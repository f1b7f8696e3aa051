import type { Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { FILE_SOURCE, PodOperation } from '../constants.js';
import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { sortByteOrder } from '../values/canonical-json.js';
import { watchStaticPodPath, type PathWatcher, type WatchStaticPodPath } from './file-watch.js';
import { createManifestCache, type ListedFile, type ManifestCache } from './manifest-cache.js';
import { periodMs, requiredString } from './source-options.js';
import { noopLogger, type PodUpdate, type SetDelta, type SourceLogger } from './types.js';
import { podUID } from '../values/pod-format.js';

export interface FileSourceOptions {
  /** staticPodPath: a directory of manifests or a single manifest file. */
  readonly path: string;
  readonly nodeName: string;
  /** Receives every SET; the PodConfig channel for `file` fits here. */
  readonly onUpdate: (update: PodUpdate) => void;
  /** Full re-list period (fixed rate), default 20 s. */
  readonly fileCheckFrequencyMs?: number;
  /** How often a missing watch is retried, default 1 s. */
  readonly watchRetryMs?: number;
  /** Set false to rely on the periodic re-list only. Default true. */
  readonly watch?: boolean;
  /**
   * Sets up the watch; `watchStaticPodPath` by default. Many nodes of one process pass one
   * that shares a single watch per directory (src/fleet/file-watch-hub.ts).
   */
  readonly watchPath?: WatchStaticPodPath;
  /**
   * Reads the path for a listing; each source reads its own by default. Many nodes of one
   * process pass one that lets sources listing the same path close together share one reading
   * (src/fleet/file-watch-hub.ts).
   */
  readonly shareReading?: ShareReading;
  readonly logger?: SourceLogger;
  /**
   * Called when a manifest is refused (too large, not a pod, invalid, referencing API
   * objects), once per content of the file, as it is logged: the agent records an event.
   */
  readonly onRejected?: (path: string, error: KubeletPodsError) => void;
  /** Periods, burst pacing, and the wall time compared with file times; the real clock by default. */
  readonly clock?: Clock;
}

export interface FileSource {
  /**
   * Lists at once, then watches and re-lists every fileCheckFrequency. After stop(), start()
   * begins again: its first listing sends the whole set, changed or not.
   */
  start(): void;
  /** Stops the timers and the watch; resolves once the listing or event in progress ended. Nothing is sent after it. */
  stop(): Promise<void>;
  /**
   * One full listing (the kubelet's listConfig): sends a SET when it has something to say
   * and rejects with the path-level error, if any. Individual bad files in a directory are
   * logged, never thrown.
   */
  listConfig(): Promise<void>;
  /** Counters: full listings done, and manifest files opened and read. */
  stats(): FileSourceStats;
}

/** What a listing finds at the static pod path: its stat and, for a directory, its manifests. */
export interface PathReading {
  readonly info: Stats;
  /** The directory's regular files in byte order (undefined when the path is a file). */
  readonly files?: readonly ListedFile[];
}

/**
 * Runs `read` for a listing of `root`, or hands out a reading another listing of the same path
 * got, when nothing can have changed since (see createFileWatchHub). Rejects as `read` does,
 * with the error of the path's stat.
 */
export type ShareReading = (root: string, read: () => Promise<PathReading>) => Promise<PathReading>;

export interface FileSourceStats {
  listings: number;
  filesRead: number;
}

/** Pending watch events above which a burst is folded into fewer SETs. */
const BURST_PENDING = 8;
/** At most this many entries handled side by side (files open at once). */
const BATCH_MAX = 64;
/** Inside a burst, the longest time without a SET. */
const BURST_MAX_SILENCE_MS = 100;

const errnoCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;
/** staticPodPath without trailing separators (the root `/` stays). */
function cleanRoot(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' && path.startsWith('/') ? '/' : trimmed;
}

/** An entry's stat, or why there is none; never rejects, so it can be started before it is awaited. */
const statEntry = (path: string): Promise<Stats | NodeJS.ErrnoException> => stat(path).catch((err: NodeJS.ErrnoException) => err);

function joinEntry(root: string, name: string): string {
  return root.endsWith('/') ? `${root}${name}` : `${root}/${name}`;
}

/**
 * What changed from the previous SET's pods to the next ones, by object identity: the
 * manifest cache hands out the same object for a file that did not change.
 */
function diffSets(base: readonly Pod[], pods: readonly Pod[]): SetDelta {
  const before = new Set(base);
  const after = new Set(pods);
  const changed = pods.filter((pod) => !before.has(pod));
  const changedUIDs = new Set(changed.map(podUID));
  const removed = base.filter((pod) => !after.has(pod) && !changedUIDs.has(podUID(pod)));
  return { base, changed, removed };
}

/**
 * Reads static pod manifests from a directory or a single file.
 *
 * Output is always `SET` for source `file`, carrying every valid pod in byte-wise path order,
 * with each pod's path (`origins`) and, after the first, the delta from the previous SET; a
 * SET equal to the previous one is not sent. Two files defining the same namespace/name are
 * both sent: the merger keeps the first (so the first path in byte order wins) and its warning
 * names both files. The set is always recomputed from the per-file state, so the kubelet's
 * stale-store quirk (pods resurrected after an all-invalid listing) does not exist here.
 * As in the kubelet: a missing path sends an empty SET (the source counts as seen) and logs
 * an error; a file whose new content does not parse after a watch event keeps its old pod
 * until the next full re-list.
 */
export function createFileSource(options: FileSourceOptions): FileSource {
  return new FileSourceImpl(options);
}

class FileSourceImpl implements FileSource {
  readonly #options: FileSourceOptions;
  readonly #root: string;
  readonly #logger: SourceLogger;
  readonly #clock: Clock;
  readonly #period: number;
  readonly #watchRetry: number;
  readonly #cache: ManifestCache;
  /** The pods of the last SET sent: the base of the next SET's delta. */
  #lastSent: Pod[] | undefined;
  #queue: Promise<void> = Promise.resolve();
  /** Entries with an event not yet handled, in arrival order; `null`: the whole path. */
  readonly #pending = new Set<string | null>();
  #batchQueued = false;
  #watcher: PathWatcher | undefined;
  #rescanTimer: ClockTimer | undefined;
  #watchTimer: ClockTimer | undefined;
  #listing = false;
  /** `new`: never started (a one-shot listConfig still sends); `stopped`: sends nothing. */
  #state: 'new' | 'running' | 'stopped' = 'new';
  #lastLoggedListError: string | undefined;
  /** Entries changed by watch events since the last send (sent once the burst is handled). */
  #dirty = false;
  #lastSendAt = 0;
  #listings = 0;

  constructor(options: FileSourceOptions) {
    this.#root = cleanRoot(requiredString(options.path, 'path'));
    this.#period = periodMs(options.fileCheckFrequencyMs, 20_000, 'fileCheckFrequencyMs');
    this.#watchRetry = periodMs(options.watchRetryMs, 1_000, 'watchRetryMs');
    this.#options = options;
    this.#logger = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
    this.#cache = createManifestCache({ nodeName: options.nodeName, clock: this.#clock, logger: this.#logger, onRejected: options.onRejected });
  }

  start(): void {
    if (this.#state === 'running') return;
    this.#state = 'running';
    // Whoever listens may have lost what was sent before a stop: begin with a whole set.
    this.#lastSent = undefined;
    this.#rescan();
    this.#rescanTimer = this.#clock.setInterval(() => this.#rescan(), this.#period);
  }

  async stop(): Promise<void> {
    this.#state = 'stopped';
    this.#clock.clearInterval(this.#rescanTimer);
    this.#clock.clearTimeout(this.#watchTimer);
    this.#rescanTimer = this.#watchTimer = undefined;
    this.#watcher?.close();
    this.#watcher = undefined;
    await this.#queue;
  }

  listConfig(): Promise<void> {
    return this.#enqueue(() => this.#listConfig());
  }

  stats(): FileSourceStats {
    return { listings: this.#listings, filesRead: this.#cache.filesRead() };
  }

  get #running(): boolean {
    return this.#state === 'running';
  }

  /** Fixed-rate re-list; a tick is skipped while the previous listing is still running. */
  #rescan(): void {
    if (this.#listing) return;
    this.#listing = true;
    this.listConfig()
      .then(
        () => {
          this.#lastLoggedListError = undefined;
        },
        (err: Error) => {
          if (err.message !== this.#lastLoggedListError) {
            this.#logger.error({ source: FILE_SOURCE, path: this.#root, err }, 'unable to read static pod path');
            this.#lastLoggedListError = err.message;
          }
        },
      )
      .finally(() => {
        this.#listing = false;
        if (this.#running) void this.#ensureWatcher();
      });
  }

  #enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Tries the watch again after watchRetry while there is none. A timer only while it is
   * missing, not a ticking interval: a fleet has one source per node, and 1,000 idle sources
   * would otherwise wake 1,000 times a second to find their watch in place.
   */
  #retryWatchLater(): void {
    if (this.#watchTimer !== undefined || this.#watcher || !this.#running || this.#options.watch === false) return;
    this.#watchTimer = this.#clock.setTimeout(() => {
      this.#watchTimer = undefined;
      void this.#ensureWatcher();
    }, Math.min(this.#watchRetry, this.#period));
  }

  async #ensureWatcher(): Promise<void> {
    if (this.#watcher || !this.#running || this.#options.watch === false) return;
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(this.#root)).isDirectory();
    } catch {
      // A dangling single-file symlink still has a parent directory worth watching.
      isDirectory = false;
    }
    if (this.#watcher || !this.#running) return;
    try {
      this.#watcher = (this.#options.watchPath ?? watchStaticPodPath)(
        this.#root,
        isDirectory,
        (name) => this.#onWatchEvent(name),
        (err) => {
          this.#logger.warn({ source: FILE_SOURCE, path: this.#root, err }, 'static pod path watch failed, relisting');
          this.#watcher?.close();
          this.#watcher = undefined;
          this.#onWatchEvent(null);
          this.#retryWatchLater();
        },
      );
      // A file written after the last listing read the directory and before the watch existed
      // has sent no event: list once more now that nothing can slip through, rather than
      // leave it to the next re-list (fileCheckFrequency, 20 s).
      this.#onWatchEvent(null);
    } catch {
      // Retried after watchRetry; meanwhile the periodic re-list keeps the state right.
      this.#retryWatchLater();
    }
  }

  /**
   * Events are coalesced per entry and handled in batches, one batch at a time: every entry
   * with an event when a batch begins is handled in it, side by side (up to BATCH_MAX). A
   * manifest written just after a mass removal then waits for one batch, not for a stat of
   * each removed file in turn.
   */
  #onWatchEvent(name: string | null): void {
    if (!this.#running || this.#pending.has(name)) return;
    this.#pending.add(name);
    this.#queueBatch();
  }

  #queueBatch(): void {
    if (this.#batchQueued) return;
    this.#batchQueued = true;
    void this.#enqueue(() => this.#handleBatch());
  }

  async #handleBatch(): Promise<void> {
    this.#batchQueued = false;
    if (!this.#running) {
      this.#pending.clear();
      return;
    }
    const names: string[] = [];
    let relist = false;
    for (const name of this.#pending) {
      if (name === null) relist = true;
      else if (names.length < BATCH_MAX) names.push(name);
    }
    // A full listing covers every entry, those still pending included.
    if (relist) this.#pending.clear();
    else for (const name of names) this.#pending.delete(name);
    if (this.#pending.size > 0) this.#queueBatch();
    try {
      if (relist) await this.#listConfig();
      else await this.#handleEntryEvents(names);
    } catch (err) {
      this.#logger.error({ source: FILE_SOURCE, path: this.#root, err }, 'unable to read static pod path');
    }
    this.#sendIfDue();
  }

  /**
   * One SET per batch, which is one per event unless events come faster than they are
   * handled. In a burst (1,000 manifests renamed in) changes are folded further while more
   * than BURST_PENDING events wait, since each SET costs O(pods) here; at least one SET per
   * BURST_MAX_SILENCE_MS.
   */
  #sendIfDue(): void {
    if (
      this.#dirty &&
      (this.#pending.size < BURST_PENDING || this.#clock.monotonic() - this.#lastSendAt >= BURST_MAX_SILENCE_MS)
    ) {
      this.#send();
    }
  }

  async #handleEntryEvents(names: readonly string[]): Promise<void> {
    // The path's own stat runs beside the entries' (their changes are applied only once it
    // says the path is still a directory): one round trip to the disk fewer before a new
    // manifest is read. Under a single-file path the entries' stats fail and are not used.
    const rootStat = stat(this.#root);
    const entryStats = names.map((name) => statEntry(joinEntry(this.#root, name)));
    let rootIsDir: boolean;
    try {
      rootIsDir = (await rootStat).isDirectory();
    } catch (err) {
      // The path itself went away: a full listing reports it (and sends the empty SET).
      if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') {
        this.#watcher?.close();
        this.#watcher = undefined;
        this.#retryWatchLater();
        return this.#listConfig();
      }
      throw err;
    }
    // A single-file path names only itself, however many events came.
    const entries = rootIsDir
      ? names.map((name, i) => ({ path: joinEntry(this.#root, name), info: entryStats[i]! }))
      : [{ path: this.#root, info: statEntry(this.#root) }];
    const seen = await Promise.all(entries.map(async ({ path, info }) => ({ path, file: this.#regularFile(path, await info) })));
    // Outside a burst, entries that lost their file go first and are sent on their own, as the
    // kubelet handles a rename's two events in turn: a manifest renamed within the directory is
    // first gone (a SET without it), then back under its new name with a new UID.
    const gone = seen.filter((entry) => entry.file === undefined);
    if (gone.length > 0 && seen.length < BURST_PENDING) {
      await this.#updateEntries(gone);
      this.#sendIfDue();
      await this.#updateEntries(seen.filter((entry) => entry.file !== undefined));
    } else {
      await this.#updateEntries(seen);
    }
  }

  /** The entry's stat when it is a regular file; undefined when it is gone or something else. */
  #regularFile(path: string, info: Stats | NodeJS.ErrnoException): Stats | undefined {
    // A symlink loop (ELOOP), a name too long, no permission: this entry has no pod, and the
    // log names the entry, not the whole directory (a full listing does the same).
    if (info instanceof Error && errnoCode(info) !== 'ENOENT' && errnoCode(info) !== 'ENOTDIR') {
      this.#logger.error({ source: FILE_SOURCE, path, err: info }, 'cannot stat manifest, skipping');
    }
    // Removed, renamed away, or not a regular file (a new sub-directory): no pod here.
    return info instanceof Error || !info.isFile() ? undefined : info;
  }

  async #updateEntries(entries: readonly { path: string; file: Stats | undefined }[]): Promise<void> {
    const results = await Promise.allSettled(entries.map(({ path, file }) => this.#cache.update(path, file)));
    results.forEach((result, i) => {
      if (result.status === 'rejected') this.#logger.error({ source: FILE_SOURCE, path: entries[i]!.path, err: result.reason }, 'cannot read manifest');
      else if (result.value) this.#dirty = true;
    });
  }

  async #listConfig(): Promise<void> {
    this.#listings += 1;
    let reading: PathReading;
    try {
      reading = await (this.#options.shareReading?.(this.#root, () => this.#readPath()) ?? this.#readPath());
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        // Still announce the source, so that the kubelet does not wait for it forever.
        this.#cache.clear();
        this.#send();
        throw kpError('KP_ERR_SOURCE_PATH_MISSING', [this.#root], { cause: err });
      }
      throw kpError('KP_ERR_SOURCE_PATH_STAT', [this.#root], { cause: err });
    }
    if (reading.files !== undefined) {
      await this.#cache.relist(reading.files);
      this.#send();
      return;
    }
    if (reading.info.isFile()) {
      await this.#cache.relistFile({ path: this.#root, info: reading.info });
      this.#send();
      return;
    }
    throw kpError('KP_ERR_SOURCE_PATH_TYPE', [this.#root]);
  }

  /** The path's stat and, for a directory, its listing; rejects with the stat's error. */
  async #readPath(): Promise<PathReading> {
    const info = await stat(this.#root);
    return info.isDirectory() ? { info, files: await this.#listDirectory() } : { info };
  }

  /** Every entry not starting with `.`, in byte order; directories and unreadable entries are skipped. */
  async #listDirectory(): Promise<ListedFile[]> {
    let names: string[];
    try {
      names = await readdir(this.#root);
    } catch (err) {
      this.#logger.error({ source: FILE_SOURCE, path: this.#root, err }, 'cannot read static pod directory');
      names = [];
    }
    const paths = sortByteOrder(names.filter((n) => !n.startsWith('.')).map((n) => joinEntry(this.#root, n)));
    const files: ListedFile[] = [];
    for (const path of paths) {
      let info;
      try {
        info = await stat(path);
      } catch (err) {
        this.#logger.debug({ source: FILE_SOURCE, path, err }, 'cannot stat manifest, skipping');
        continue;
      }
      if (info.isDirectory()) {
        this.#logger.debug({ source: FILE_SOURCE, path }, 'not recursing into manifest sub-directory');
        continue;
      }
      if (!info.isFile()) {
        this.#logger.debug({ source: FILE_SOURCE, path }, 'manifest is not a regular file, skipping');
        continue;
      }
      files.push({ path, info });
    }
    return files;
  }

  /** Sends the current set, with its delta from the last one, unless nothing changed. */
  #send(): void {
    if (this.#state === 'stopped') return;
    this.#dirty = false;
    this.#lastSendAt = this.#clock.monotonic();
    const { pods, origins } = this.#cache.pods();
    const base = this.#lastSent;
    const delta = base === undefined ? undefined : diffSets(base, pods);
    if (delta !== undefined && delta.changed.length === 0 && delta.removed.length === 0) return;
    this.#lastSent = pods;
    this.#options.onUpdate({ op: PodOperation.SET, source: FILE_SOURCE, pods, origins, ...(delta ? { delta } : {}) });
  }
}
