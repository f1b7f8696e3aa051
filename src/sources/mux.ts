/** Receives every update of every source, one at a time, tagged with the source's name. */
export interface Merger<T> {
  merge(source: string, update: T): void;
}

/** What a source pushes into: calling it hands one update to the merger. */
export type SourceChannel<T> = (update: T) => void;

/**
 * Fan-in of named sources into one merger. `channel(name)` registers the source on first use
 * and returns the same function for the same name afterwards. Merges run synchronously in
 * call order, so updates are merged one at a time (JavaScript needs no lock for that).
 */
export class Mux<T> {
  private readonly channels = new Map<string, SourceChannel<T>>();

  constructor(private readonly merger: Merger<T>) {}

  channel(source: string): SourceChannel<T> {
    let ch = this.channels.get(source);
    if (!ch) {
      ch = (update: T) => this.merger.merge(source, update);
      this.channels.set(source, ch);
    }
    return ch;
  }

  /** Names of the sources registered so far, in registration order. */
  sources(): string[] {
    return [...this.channels.keys()];
  }

  /** True when `test` holds for every source registered (and when there is none), without building a list. */
  everySource(test: (source: string) => boolean): boolean {
    for (const source of this.channels.keys()) if (!test(source)) return false;
    return true;
  }
}
