/**
 * Tracks which sources the kubelet has processed at least one update from, and answers
 * "are all sources ready" through a function supplied by the owner of the configured-source
 * list (normally `(seen) => podConfig.seenAllSources(seen)`).
 */
export interface SourcesReady {
  /** Called after an update from `source` was dispatched. */
  addSource(source: string): void;
  allReady(): boolean;
  /** Whether an update from `source` was dispatched. */
  seen(source: string): boolean;
}

export function createSourcesReady(sourcesReadyFn: (seen: ReadonlySet<string>) => boolean): SourcesReady {
  return new SourcesSeen(sourcesReadyFn);
}

// A class, its methods on the prototype: a fleet makes one per node.
class SourcesSeen implements SourcesReady {
  readonly #seen = new Set<string>();

  constructor(private readonly sourcesReadyFn: (seen: ReadonlySet<string>) => boolean) {}

  addSource(source: string): void {
    this.#seen.add(source);
  }

  allReady(): boolean {
    return this.sourcesReadyFn(this.#seen);
  }

  seen(source: string): boolean {
    return this.#seen.has(source);
  }
}
