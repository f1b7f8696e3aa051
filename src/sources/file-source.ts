import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { FILE_SOURCE, MAX_CONFIG_LENGTH, PodOperation } from '../constants.js';
import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { sortByteOrder } from './canonical-json.js';
import { decodeSinglePod } from './decode.js';
import { applyStaticPodDefaults } from './defaults.js';
import { watchStaticPodPath, type PathWatcher } from './file-watch.js';
import { checkStaticPodReferences } from './static-pod-rules.js';
import { noopLogger, realTimers, type PodUpdate, type SourceLogger, type SourceTimers } from './types.js';

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
  readonly logger?: SourceLogger;
  readonly timers?: SourceTimers;
  /** Wall clock in ms (Date.now), compared with file times by the settle rule; for tests. */
  readonly now?: () => number;
}

export interface FileSource {
  /** Lists at once, then watches and re-lists every fileCheckFrequency. */
  start(): void;
  stop(): void;
  /**
   * One full listing (the kubelet's listConfig): sends a SET when it has something to say
   * and rejects with the path-level error, if any. Individual bad files in a directory are
   * logged, never thrown.
   */
  listConfig(): Promise<void>;
  /** Counters: full listings done, and manifest files opened and read. */
  stats(): FileSourceStats;
}

export interface FileSourceStats {
  listings: number;
  filesRead: number;
}

interface Entry {
  /** Digest of the bytes last read, so an unchanged file is neither re-parsed nor re-reported. */
  readonly digest: string;
  /**
   * The file's identity, size and times when it was read, if they had been still for longer
   * than RACY_MS then: a re-list that finds the same signature skips reading the file.
   */
  readonly settledSignature?: string;
  readonly outcome: { readonly pod: Pod } | { readonly error: Error };
  /** After a watch event made the file unparsable: the pod it had, kept until the next re-list. */
  readonly stalePod?: Pod;
}

/**
 * File times have coarse granularity (a kernel tick), so two writes close together can leave
 * the same size and times. A signature is trusted only for a file that had not changed for
 * this long when it was read (the "racily clean" rule of git's index).
 */
const RACY_MS = 2_000;

const signatureOf = (info: Stats): string => `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;

/** Pending watch events above which a burst is folded into fewer SETs. */
const BURST_PENDING = 8;

const effectivePod = (e: Entry): Pod | undefined => ('pod' in e.outcome ? e.outcome.pod : e.stalePod);
const errnoCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** staticPodPath without trailing separators (the root `/` stays). */
function cleanRoot(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' && path.startsWith('/') ? '/' : trimmed;
}

/**
 * Reads static pod manifests from a directory or a single file.
 *
 * Output is always `SET` for source `file`, carrying every valid pod, in byte-wise path
 * order; a SET equal to the previous one is not sent again. Differences from the kubelet:
 * - two files defining the same namespace/name: the FIRST path in byte order wins, and a
 *   warning names both files (the kubelet lets the later or the most recent one win);
 * - the set is always recomputed from the per-file state, so the kubelet's stale-store quirk
 *   (pods resurrected after an all-invalid listing) does not exist here.
 * As in the kubelet: a missing path sends an empty SET (the source counts as seen) and logs
 * an error; a file whose new content does not parse after a watch event keeps its old pod
 * until the next full re-list.
 */
export function createFileSource(options: FileSourceOptions): FileSource {
  return new FileSourceImpl(options);
}

class FileSourceImpl implements FileSource {
  private readonly root: string;
  private readonly logger: SourceLogger;
  private readonly timers: SourceTimers;
  private readonly period: number;
  private readonly watchRetry: number;
  private entries = new Map<string, Entry>();
  /** The pods of the last SET. Unchanged entries keep their pod objects, so identity tells. */
  private lastSentPods: readonly Pod[] | undefined;
  /** Entry paths in byte order, rebuilt only when an entry is added or removed. */
  private sortedPaths: string[] | undefined;
  private warnedDuplicates = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private readonly pendingEvents: (string | null)[] = [];
  private readonly pendingSet = new Set<string | null>();
  private watcher: PathWatcher | undefined;
  private rescanTimer: unknown;
  private watchTimer: unknown;
  private listing = false;
  private stopped = true;
  private terminated = false;
  private lastLoggedListError: string | undefined;
  /** Entries changed by watch events since the last send (sent once the burst is handled). */
  private dirty = false;
  private lastSendAt = 0;
  private readonly counters: FileSourceStats = { listings: 0, filesRead: 0 };

  constructor(private readonly options: FileSourceOptions) {
    if (!options.path) throw kpError('KP_ERR_SOURCE_OPTIONS', ['path', 'an empty string']);
    this.period = options.fileCheckFrequencyMs ?? 20_000;
    if (!(this.period > 0)) throw kpError('KP_ERR_SOURCE_OPTIONS', ['fileCheckFrequencyMs', String(this.period)]);
    this.watchRetry = options.watchRetryMs ?? 1_000;
    this.root = cleanRoot(options.path);
    this.logger = options.logger ?? noopLogger;
    this.timers = options.timers ?? realTimers;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.rescan();
    this.rescanTimer = this.timers.setInterval(() => this.rescan(), this.period);
    if (this.options.watch !== false) {
      this.watchTimer = this.timers.setInterval(() => void this.ensureWatcher(), Math.min(this.watchRetry, this.period));
    }
  }

  stop(): void {
    this.stopped = true;
    this.terminated = true;
    if (this.rescanTimer !== undefined) this.timers.clearInterval(this.rescanTimer);
    if (this.watchTimer !== undefined) this.timers.clearInterval(this.watchTimer);
    this.rescanTimer = this.watchTimer = undefined;
    this.watcher?.close();
    this.watcher = undefined;
  }

  listConfig(): Promise<void> {
    return this.enqueue(() => this.doListConfig());
  }

  stats(): FileSourceStats {
    return { ...this.counters };
  }

  /** Fixed-rate re-list; a tick is skipped while the previous listing is still running. */
  private rescan(): void {
    if (this.listing) return;
    this.listing = true;
    this.listConfig()
      .then(
        () => {
          this.lastLoggedListError = undefined;
        },
        (err: Error) => {
          if (err.message !== this.lastLoggedListError) {
            this.logger.error({ source: FILE_SOURCE, path: this.root, err }, 'unable to read static pod path');
            this.lastLoggedListError = err.message;
          }
        },
      )
      .finally(() => {
        this.listing = false;
        if (!this.stopped) void this.ensureWatcher();
      });
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => {});
    return run;
  }

  private async ensureWatcher(): Promise<void> {
    if (this.watcher || this.stopped || this.options.watch === false) return;
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(this.root)).isDirectory();
    } catch {
      // A dangling single-file symlink still has a parent directory worth watching.
      isDirectory = false;
    }
    if (this.watcher || this.stopped) return;
    try {
      this.watcher = watchStaticPodPath(
        this.root,
        isDirectory,
        (name) => this.onWatchEvent(name),
        (err) => {
          this.logger.warn({ source: FILE_SOURCE, path: this.root, err }, 'static pod path watch failed, relisting');
          this.watcher?.close();
          this.watcher = undefined;
          this.onWatchEvent(null);
        },
      );
    } catch {
      // Retried by the watch timer; meanwhile the periodic re-list keeps the state right.
    }
  }

  /** Events are coalesced per entry and handled one at a time, in arrival order. */
  private onWatchEvent(name: string | null): void {
    if (this.stopped || this.pendingSet.has(name)) return;
    this.pendingSet.add(name);
    this.pendingEvents.push(name);
    void this.enqueue(async () => {
      const next = this.pendingEvents.shift();
      if (next === undefined) return;
      this.pendingSet.delete(next);
      if (this.stopped) return;
      try {
        if (next === null) await this.doListConfig();
        else await this.handleEntryEvent(next);
      } catch (err) {
        this.logger.error({ source: FILE_SOURCE, path: this.root, err }, 'unable to read static pod path');
      }
      // One SET per event, as the kubelet sends, except inside a burst (1,000 manifests renamed
      // in): while more than BURST_PENDING events wait, changes are folded into the next SET,
      // since each SET costs O(pods) here and in the merge. At least one SET per 100 ms.
      if (this.dirty && (this.pendingEvents.length < BURST_PENDING || performance.now() - this.lastSendAt >= 100)) this.send();
    });
  }

  private async handleEntryEvent(name: string): Promise<void> {
    let rootIsDir: boolean;
    try {
      rootIsDir = (await stat(this.root)).isDirectory();
    } catch (err) {
      // The path itself went away: a full listing reports it (and sends the empty SET).
      if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') {
        this.watcher?.close();
        this.watcher = undefined;
        return this.doListConfig();
      }
      throw err;
    }
    const path = rootIsDir ? joinEntry(this.root, name) : this.root;
    let info: Stats | undefined;
    try {
      info = await stat(path);
    } catch (err) {
      // A symlink loop (ELOOP), a name too long, no permission: this entry has no pod, and
      // the log names the entry, not the whole directory (a full listing does the same).
      if (errnoCode(err) !== 'ENOENT' && errnoCode(err) !== 'ENOTDIR') {
        this.logger.error({ source: FILE_SOURCE, path, err }, 'cannot stat manifest, skipping');
      }
    }
    if (!info?.isFile()) {
      // Removed, renamed away, or not a regular file (a new sub-directory): no pod here.
      if (this.entries.delete(path)) {
        this.dirty = true;
        this.sortedPaths = undefined;
      }
      return;
    }
    const previous = this.entries.get(path);
    if (previous === undefined) this.sortedPaths = undefined;
    // A watch event always reads: it is how a change the signature cannot see gets noticed.
    const entry = await this.readEntry(path, info, previous);
    if ('error' in entry.outcome && previous) {
      const stale = effectivePod(previous);
      this.entries.set(path, stale ? { ...entry, stalePod: stale } : entry);
    } else {
      this.entries.set(path, entry);
    }
    this.dirty = true;
  }

  private async doListConfig(): Promise<void> {
    this.counters.listings += 1;
    let info;
    try {
      info = await stat(this.root);
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        // Still announce the source, so that the kubelet does not wait for it forever.
        this.entries = new Map();
        this.sortedPaths = undefined;
        this.send();
        throw kpError('KP_ERR_SOURCE_PATH_MISSING', [this.root], { cause: err });
      }
      throw kpError('KP_ERR_SOURCE_PATH_STAT', [this.root], { cause: err });
    }
    if (info.isDirectory()) {
      this.entries = await this.extractFromDir();
      // extractFromDir inserts in byte order.
      this.sortedPaths = [...this.entries.keys()];
      this.send();
      return;
    }
    if (info.isFile()) {
      const entry = await this.listedEntry(this.root, info, this.entries.get(this.root));
      if ('error' in entry.outcome) throw entry.outcome.error;
      this.entries = new Map([[this.root, entry]]);
      this.sortedPaths = undefined;
      this.send();
      return;
    }
    throw kpError('KP_ERR_SOURCE_PATH_TYPE', [this.root]);
  }

  /** Every entry not starting with `.`, in byte order; directories and unreadable entries are skipped. */
  private async extractFromDir(): Promise<Map<string, Entry>> {
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch (err) {
      this.logger.error({ source: FILE_SOURCE, path: this.root, err }, 'cannot read static pod directory');
      names = [];
    }
    const paths = sortByteOrder(names.filter((n) => !n.startsWith('.')).map((n) => joinEntry(this.root, n)));
    const next = new Map<string, Entry>();
    for (const path of paths) {
      let info;
      try {
        info = await stat(path);
      } catch (err) {
        this.logger.debug({ source: FILE_SOURCE, path, err }, 'cannot stat manifest, skipping');
        continue;
      }
      if (info.isDirectory()) {
        this.logger.debug({ source: FILE_SOURCE, path }, 'not recursing into manifest sub-directory');
        continue;
      }
      if (!info.isFile()) {
        this.logger.debug({ source: FILE_SOURCE, path }, 'manifest is not a regular file, skipping');
        continue;
      }
      try {
        next.set(path, await this.listedEntry(path, info, this.entries.get(path)));
      } catch (err) {
        if (errnoCode((err as Error).cause) !== 'ENOENT') {
          this.logger.error({ source: FILE_SOURCE, path, err }, 'cannot read manifest');
        }
      }
    }
    return next;
  }

  /**
   * A file met by a listing: the previous entry as it is when the file's signature has not
   * changed since a settled read (with thousands of manifests, re-reading and hashing each
   * one every fileCheckFrequency was most of the agent's idle CPU); read otherwise.
   */
  private listedEntry(path: string, info: Stats, previous: Entry | undefined): Promise<Entry> | Entry {
    if (previous?.settledSignature === undefined || previous.settledSignature !== signatureOf(info)) return this.readEntry(path, info, previous);
    // A listing ends the grace of a pod kept after its file stopped parsing.
    return previous.stalePod === undefined ? previous : { digest: previous.digest, outcome: previous.outcome, settledSignature: previous.settledSignature };
  }

  /**
   * Reads and parses one manifest (`info`: its stat just before); an unchanged file reuses
   * its previous outcome. Parse problems are logged here, once per content; read errors are
   * thrown.
   */
  private async readEntry(path: string, info: Stats, previous: Entry | undefined): Promise<Entry> {
    const readAt = (this.options.now ?? Date.now)();
    this.counters.filesRead += 1;
    const data = await readLimited(path);
    const settled = readAt - Math.max(info.mtimeMs, info.ctimeMs) > RACY_MS;
    const signature = settled ? { settledSignature: signatureOf(info) } : {};
    if (data === 'too-large') {
      const error = kpError('KP_ERR_SOURCE_FILE_TOO_LARGE', [path, MAX_CONFIG_LENGTH]);
      const digest = 'too-large';
      if (previous?.digest !== digest) this.logger.error({ source: FILE_SOURCE, path, err: error }, "can't process config file");
      return { digest, outcome: { error }, ...signature };
    }
    const digest = createHash('sha256').update(data).digest('hex');
    if (previous && previous.digest === digest) return { digest, outcome: previous.outcome, ...signature };
    const outcome = parseManifestFile(data, path, this.options.nodeName);
    if ('error' in outcome) {
      this.logger.error({ source: FILE_SOURCE, path, err: outcome.error }, "can't process config file");
    }
    return { digest, outcome, ...signature };
  }

  /** Sends the current set unless it equals the last one sent. */
  private send(): void {
    if (this.terminated) return;
    this.dirty = false;
    this.lastSendAt = performance.now();
    const pods: Pod[] = [];
    const owner = new Map<string, string>();
    const duplicates = new Set<string>();
    this.sortedPaths ??= sortByteOrder([...this.entries.keys()]);
    for (const path of this.sortedPaths) {
      const pod = effectivePod(this.entries.get(path)!);
      if (!pod) continue;
      const key = `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
      const first = owner.get(key);
      if (first !== undefined) {
        const warning = `${key}\0${first}\0${path}`;
        duplicates.add(warning);
        if (!this.warnedDuplicates.has(warning)) {
          this.logger.warn(
            { source: FILE_SOURCE, pod: key, path, kept: first },
            `static pod ${key} is defined by both ${JSON.stringify(first)} and ${JSON.stringify(path)}: keeping the first, ignoring the second`,
          );
        }
        continue;
      }
      owner.set(key, path);
      pods.push(pod);
    }
    this.warnedDuplicates = duplicates;
    // Unchanged files keep their parsed pod objects (readEntry reuses them when the content's
    // digest is the same), so the same objects in the same order mean the same set. Comparing
    // identities instead of serialising every pod keeps a SET O(pods) with a tiny constant,
    // and handing over the same objects lets the merger skip them. Pods are never mutated
    // after parsing: the merger copies what it stores.
    const last = this.lastSentPods;
    if (last !== undefined && last.length === pods.length && pods.every((pod, i) => pod === last[i])) return;
    this.lastSentPods = pods;
    this.options.onUpdate({ op: PodOperation.SET, source: FILE_SOURCE, pods: [...pods] });
  }
}

function joinEntry(root: string, name: string): string {
  return root.endsWith('/') ? `${root}${name}` : `${root}/${name}`;
}

/** Reads at most MAX_CONFIG_LENGTH bytes; one byte more means the file is refused. */
async function readLimited(path: string): Promise<Buffer | 'too-large'> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    throw kpError('KP_ERR_SOURCE_FILE_READ', [path], { cause: err });
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(Math.min(64 * 1024, MAX_CONFIG_LENGTH + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > MAX_CONFIG_LENGTH) return 'too-large';
    }
    return Buffer.concat(chunks, total);
  } catch (err) {
    throw kpError('KP_ERR_SOURCE_FILE_READ', [path], { cause: err });
  } finally {
    await handle.close();
  }
}

/**
 * One manifest file → a static pod or the reason it is refused: decode as a single pod
 * (never a list), static defaults with this path, then the API-reference rules.
 */
export function parseManifestFile(
  data: Uint8Array | string,
  path: string,
  nodeName: string,
): { readonly pod: Pod } | { readonly error: KubeletPodsError } {
  const outcome = decodeSinglePod(data, (pod) => applyStaticPodDefaults(pod, { source: path, isFile: true, nodeName }));
  if (outcome.kind === 'not-pod') return { error: kpError('KP_ERR_SOURCE_DECODE', [path, outcome.reason]) };
  if (outcome.kind === 'invalid') return { error: outcome.error };
  const refError = checkStaticPodReferences(outcome.value, path);
  if (refError) return { error: refError };
  return { pod: outcome.value };
}
