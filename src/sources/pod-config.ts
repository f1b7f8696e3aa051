import { ALL_SOURCE, PodOperation } from '../constants.js';
import { kpError } from '../errors.js';
import { realClock, type Clock } from '../time/clock.js';
import { Mux, type SourceChannel } from './mux.js';
import { createPodStorage, type PodConfigEvent, type PodConfigMode, type PodStorage } from './pod-storage.js';
import { noopLogger, type PodUpdate, type SourceLogger } from './types.js';
import { UpdateStream } from './update-stream.js';

export type { PodConfigEvent, PodConfigMode } from './pod-storage.js';

export interface PodConfigOptions {
  readonly mode?: PodConfigMode;
  readonly logger?: SourceLogger;
  /** The time source of `config.seen`; the real clock by default. */
  readonly clock?: Clock;
  /** Told about every Warning the merger raises (the kubelet records them as events). */
  readonly onEvent?: (event: PodConfigEvent) => void;
}

/**
 * The config merger (the kubelet's PodConfig): every source sends SET (or ADD/UPDATE/
 * DELETE/REMOVE) updates through `channel(name)`; per-source state is kept by UID and the
 * differences come out of `updates`, one merge at a time and contiguously.
 *
 * The merger stamps `config.source` on every pod and `config.seen` the first time a UID is
 * seen from a source, on a copy of the pod's top level and metadata: input pods are never
 * mutated. Emitted pods are the merger's stored objects, shared with the consumer, who must
 * not mutate them either.
 */
export interface PodConfig {
  /** Merged updates, in order. */
  readonly updates: UpdateStream<PodUpdate>;
  /**
   * The channel a source pushes its updates into; the first call registers the source as
   * configured (seenAllSources waits for it). The same name gives the same function.
   * The `source` field of pushed updates is ignored: the channel's name is used.
   */
  channel(source: string): SourceChannel<PodUpdate>;
  /** Configured sources, in registration order. */
  sources(): string[];
  /**
   * True when every configured source is in `seen` (sources whose updates the consumer
   * processed) AND has delivered at least one SET to this merger.
   */
  seenAllSources(seen: ReadonlySet<string>): boolean;
  /** Emits a SET with source `*` carrying the merged state of every source. */
  sync(): void;
  /** Ends `updates` (queued updates are still delivered); later updates are dropped. */
  stop(): Promise<void>;
}

const MODES: readonly PodConfigMode[] = ['Incremental', 'Snapshot', 'SnapshotAndUpdates'];

export function createPodConfig(options: PodConfigOptions = {}): PodConfig {
  const mode = options.mode ?? 'Incremental';
  if (!MODES.includes(mode)) throw kpError('KP_ERR_SOURCE_OPTIONS', ['mode', JSON.stringify(mode)]);
  return new PodConfigImpl(mode, options);
}

/**
 * createPodConfig's merger front. A class, its methods on the prototype: a fleet makes one per
 * node, where a closure per method cost a few hundred bytes (docs/performance.md, "What an
 * empty node costs", third round).
 */
class PodConfigImpl implements PodConfig {
  readonly updates = new UpdateStream<PodUpdate>();
  readonly #storage: PodStorage;
  readonly #mux: Mux<PodUpdate>;

  constructor(mode: PodConfigMode, options: PodConfigOptions) {
    const updates = this.updates;
    this.#storage = createPodStorage({
      mode,
      logger: options.logger ?? noopLogger,
      clock: options.clock ?? realClock,
      onEvent: options.onEvent,
      emit: (update) => updates.push(update),
    });
    this.#mux = new Mux(this.#storage);
  }

  channel(source: string): SourceChannel<PodUpdate> {
    return this.#mux.channel(source);
  }

  sources(): string[] {
    return this.#mux.sources();
  }

  // Asked at every housekeeping pass of every node: no list is built for it.
  seenAllSources(seen: ReadonlySet<string>): boolean {
    return this.#mux.everySource((s) => seen.has(s) && this.#storage.hasSeenSet(s));
  }

  sync(): void {
    this.updates.push({ op: PodOperation.SET, source: ALL_SOURCE, pods: this.#storage.mergedState() });
  }

  async stop(): Promise<void> {
    this.updates.close();
  }
}
