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
  const seen = new Set<string>();
  return {
    addSource: (source) => {
      seen.add(source);
    },
    allReady: () => sourcesReadyFn(seen),
    seen: (source) => seen.has(source),
  };
}
