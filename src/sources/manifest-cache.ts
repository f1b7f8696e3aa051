import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { FILE_SOURCE, MAX_CONFIG_LENGTH } from '../constants.js';
import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import type { Clock } from '../time/clock.js';
import { sortByteOrder } from '../values/canonical-json.js';
import { parseManifestFile } from './manifest.js';
import type { SourceLogger } from './types.js';

/** A regular file met by a listing, with its stat taken just before. */
export interface ListedFile {
  readonly path: string;
  readonly info: Stats;
}

export interface ManifestCacheOptions {
  readonly nodeName: string;
  /** Wall time, compared with file times by the racily-clean rule. */
  readonly clock: Clock;
  readonly logger: SourceLogger;
  /**
   * Called when a manifest is refused (too large, not a pod, invalid, referencing API
   * objects), at the same moments it is logged: once per content of the file.
   */
  readonly onRejected?: ((path: string, error: KubeletPodsError) => void) | undefined;
}

/**
 * What the file source knows about each manifest path: the outcome of its last read, kept so
 * that an unchanged file is neither parsed nor reported again, and so that a re-list need not
 * even read a file that has settled. Pods come out as the same objects for as long as their
 * file does not change.
 */
export interface ManifestCache {
  /**
   * The entries become exactly `files` (a directory listing): a file whose signature is that
   * of a settled read keeps its entry, any other is read. A file that cannot be read is logged
   * and left out; one that does not parse is logged once per content and has no pod.
   */
  relist(files: readonly ListedFile[]): Promise<void>;
  /**
   * The static pod path is this one file: as relist, except that a read or parse error
   * rejects and leaves the entries as they were.
   */
  relistFile(file: ListedFile): Promise<void>;
  /**
   * A watch event named `path`: a regular file now (`info`, always read: a watch event is
   * how a change the signature cannot see gets noticed) or no pod any more (`undefined`).
   * New content that does not parse keeps the file's previous pod until the next relist, as
   * the kubelet does. Resolves false when the event changed nothing; a read error rejects.
   */
  update(path: string, info: Stats | undefined): Promise<boolean>;
  /** Forgets every entry (the static pod path is gone). */
  clear(): void;
  /** The pod of every entry that has one, in byte order of path, and the paths. */
  pods(): { pods: Pod[]; origins: string[] };
  /** Manifest files opened and read so far. */
  filesRead(): number;
}

interface Entry {
  /** Digest of the bytes last read, so an unchanged file is neither re-parsed nor re-reported. */
  readonly digest: string;
  /**
   * The file's identity, size and times when it was read, if they had been still for longer
   * than RACY_MS then: a relist that finds the same signature skips reading the file.
   */
  readonly settledSignature?: string;
  readonly outcome: { readonly pod: Pod } | { readonly error: Error };
  /** After a watch event made the file unparsable: the pod it had, kept until the next relist. */
  readonly stalePod?: Pod;
}

/**
 * File times have coarse granularity (a kernel tick), so two writes close together can leave
 * the same size and times. A signature is trusted only for a file that had not changed for
 * this long when it was read (the "racily clean" rule of git's index).
 */
const RACY_MS = 2_000;

const signatureOf = (info: Stats): string => `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;

const effectivePod = (e: Entry): Pod | undefined => ('pod' in e.outcome ? e.outcome.pod : e.stalePod);

const errnoCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

export function createManifestCache(options: ManifestCacheOptions): ManifestCache {
  return new ManifestCacheImpl(options);
}

class ManifestCacheImpl implements ManifestCache {
  readonly #options: ManifestCacheOptions;
  #entries = new Map<string, Entry>();
  /** Entry paths in byte order, rebuilt only when an entry is added or removed. */
  #sortedPaths: string[] | undefined;
  #filesRead = 0;

  constructor(options: ManifestCacheOptions) {
    this.#options = options;
  }

  filesRead(): number {
    return this.#filesRead;
  }

  async relist(files: readonly ListedFile[]): Promise<void> {
    const next = new Map<string, Entry>();
    for (const { path, info } of files) {
      try {
        next.set(path, await this.#listed(path, info, this.#entries.get(path)));
      } catch (err) {
        // A file removed between the listing and the read simply has no pod.
        if (errnoCode((err as Error).cause) !== 'ENOENT') {
          this.#options.logger.error({ source: FILE_SOURCE, path, err }, 'cannot read manifest');
        }
      }
    }
    this.#entries = next;
    this.#sortedPaths = undefined;
  }

  async relistFile({ path, info }: ListedFile): Promise<void> {
    const entry = await this.#listed(path, info, this.#entries.get(path));
    if ('error' in entry.outcome) throw entry.outcome.error;
    this.#entries = new Map([[path, entry]]);
    this.#sortedPaths = undefined;
  }

  async update(path: string, info: Stats | undefined): Promise<boolean> {
    const previous = this.#entries.get(path);
    if (info === undefined) {
      if (previous === undefined) return false;
      this.#entries.delete(path);
      this.#sortedPaths = undefined;
      return true;
    }
    const entry = await this.#read(path, info, previous);
    if (previous === undefined) this.#sortedPaths = undefined;
    const stale = 'error' in entry.outcome && previous ? effectivePod(previous) : undefined;
    this.#entries.set(path, stale ? { ...entry, stalePod: stale } : entry);
    return true;
  }

  clear(): void {
    this.#entries = new Map();
    this.#sortedPaths = undefined;
  }

  pods(): { pods: Pod[]; origins: string[] } {
    this.#sortedPaths ??= sortByteOrder([...this.#entries.keys()]);
    const pods: Pod[] = [];
    const origins: string[] = [];
    for (const path of this.#sortedPaths) {
      const pod = effectivePod(this.#entries.get(path)!);
      if (!pod) continue;
      pods.push(pod);
      origins.push(path);
    }
    return { pods, origins };
  }

  /**
   * A file met by a listing: the previous entry as it is when the file's signature has not
   * changed since a settled read (re-reading and hashing thousands of manifests every
   * fileCheckFrequency is what an idle agent would spend its CPU on: docs/performance.md); read
   * otherwise.
   */
  #listed(path: string, info: Stats, previous: Entry | undefined): Promise<Entry> | Entry {
    if (previous?.settledSignature === undefined || previous.settledSignature !== signatureOf(info)) return this.#read(path, info, previous);
    // A listing ends the grace of a pod kept after its file stopped parsing.
    return previous.stalePod === undefined ? previous : { digest: previous.digest, outcome: previous.outcome, settledSignature: previous.settledSignature };
  }

  /**
   * Reads and parses one manifest (`info`: its stat just before); an unchanged file reuses
   * its previous outcome. Parse problems are logged here, once per content; read errors are
   * thrown.
   */
  async #read(path: string, info: Stats, previous: Entry | undefined): Promise<Entry> {
    const { clock, nodeName } = this.#options;
    const readAt = clock.now().getTime();
    this.#filesRead += 1;
    const data = await readLimited(path, info.size);
    const settled = readAt - Math.max(info.mtimeMs, info.ctimeMs) > RACY_MS;
    const signature = settled ? { settledSignature: signatureOf(info) } : {};
    if (data === 'too-large') {
      const error = kpError('KP_ERR_SOURCE_FILE_TOO_LARGE', [path, MAX_CONFIG_LENGTH]);
      const digest = 'too-large';
      if (previous?.digest !== digest) this.#rejected(path, error);
      return { digest, outcome: { error }, ...signature };
    }
    const digest = createHash('sha256').update(data).digest('hex');
    if (previous && previous.digest === digest) return { digest, outcome: previous.outcome, ...signature };
    const outcome = parseManifestFile(data, path, nodeName);
    if ('error' in outcome) this.#rejected(path, outcome.error);
    return { digest, outcome, ...signature };
  }

  #rejected(path: string, error: KubeletPodsError): void {
    this.#options.logger.error({ source: FILE_SOURCE, path, err: error }, "can't process config file");
    this.#options.onRejected?.(path, error);
  }
}

/**
 * Reads at most MAX_CONFIG_LENGTH bytes; one byte more means the file is refused. The first read
 * asks for one byte more than the stat's size: a short read is the end of the file, so a file
 * that did not grow costs no second read. The handle is closed without waiting.
 */
async function readLimited(path: string, size: number): Promise<Buffer | 'too-large'> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    throw kpError('KP_ERR_SOURCE_FILE_READ', [path], { cause: err });
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    let want = Math.min(size + 1, MAX_CONFIG_LENGTH + 1);
    for (;;) {
      const chunk = Buffer.alloc(want);
      const { bytesRead } = await handle.read(chunk, 0, want, null);
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
      if (total > MAX_CONFIG_LENGTH) return 'too-large';
      if (bytesRead < want) break;
      want = Math.min(64 * 1024, MAX_CONFIG_LENGTH + 1 - total);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } catch (err) {
    throw kpError('KP_ERR_SOURCE_FILE_READ', [path], { cause: err });
  } finally {
    handle.close().catch(() => {});
  }
}
