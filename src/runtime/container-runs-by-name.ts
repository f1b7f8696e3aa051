import type { ContainerRun } from './runtime-state.js';

/**
 * A pod's container runs by container name: the few operations of a Map the runtime uses, over
 * one flat list of (name, run) pairs. A pod has a container or two, and a Map weighs about 100
 * bytes even with one entry, for every pod a fleet runs (docs/performance.md, "The fleet's cost
 * per pod"); a lookup in a list this short is as quick as a hash.
 */
export class ContainerRunsByName implements Iterable<[string, ContainerRun]> {
  // Made to size on every set: runs are added once per container start, and an array grown by
  // push reserves room for 17 more.
  #pairs: Array<string | ContainerRun>;

  constructor(entries?: Iterable<readonly [string, ContainerRun]>) {
    this.#pairs = [];
    for (const [name, run] of entries ?? []) this.set(name, run);
  }

  get size(): number {
    return this.#pairs.length / 2;
  }

  get(name: string): ContainerRun | undefined {
    const pairs = this.#pairs;
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === name) return pairs[i + 1] as ContainerRun;
    return undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, run: ContainerRun): this {
    const pairs = this.#pairs;
    for (let i = 0; i < pairs.length; i += 2) {
      if (pairs[i] === name) {
        pairs[i + 1] = run;
        return this;
      }
    }
    const grown = new Array<string | ContainerRun>(pairs.length + 2);
    for (let i = 0; i < pairs.length; i++) grown[i] = pairs[i]!;
    grown[pairs.length] = name;
    grown[pairs.length + 1] = run;
    this.#pairs = grown;
    return this;
  }

  *values(): IterableIterator<ContainerRun> {
    for (const [, run] of this) yield run;
  }

  *[Symbol.iterator](): IterableIterator<[string, ContainerRun]> {
    // Unlike a Map's, a run added while iterating is not visited (set replaces the list); no
    // caller adds while iterating.
    const pairs = this.#pairs;
    for (let i = 0; i < pairs.length; i += 2) yield [pairs[i] as string, pairs[i + 1] as ContainerRun];
  }
}
