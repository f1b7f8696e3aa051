import type { ContainerRun } from './runtime-state.js';

/**
 * A pod's container runs by container name: the few operations of a Map the runtime uses, over
 * the first (name, run) pair in fields of its own and the rest, if any, in one flat list. A pod
 * has a container or two, and a Map weighs about 100 bytes even with one entry, for every pod a
 * fleet runs (docs/performance.md, "The fleet's cost per pod"); a lookup in a list this short is
 * as quick as a hash.
 */
export class ContainerRunsByName implements Iterable<[string, ContainerRun]> {
  // A pod of one container, most pods, needs no array at all (an array is two objects, about
  // 64 bytes with one pair).
  #firstName: string | undefined = undefined;
  #firstRun: ContainerRun | undefined = undefined;
  // Made to size on every set: runs are added once per container start, and an array grown by
  // push reserves room for 17 more.
  #more: Array<string | ContainerRun> | undefined = undefined;

  constructor(entries?: Iterable<readonly [string, ContainerRun]>) {
    for (const [name, run] of entries ?? []) this.set(name, run);
  }

  get size(): number {
    return (this.#firstName === undefined ? 0 : 1) + (this.#more === undefined ? 0 : this.#more.length / 2);
  }

  get(name: string): ContainerRun | undefined {
    if (this.#firstName === name) return this.#firstRun;
    const more = this.#more;
    if (more === undefined) return undefined;
    for (let i = 0; i < more.length; i += 2) if (more[i] === name) return more[i + 1] as ContainerRun;
    return undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, run: ContainerRun): this {
    if (this.#firstName === undefined || this.#firstName === name) {
      this.#firstName = name;
      this.#firstRun = run;
      return this;
    }
    const more = this.#more ?? [];
    for (let i = 0; i < more.length; i += 2) {
      if (more[i] === name) {
        more[i + 1] = run;
        return this;
      }
    }
    const grown = new Array<string | ContainerRun>(more.length + 2);
    for (let i = 0; i < more.length; i++) grown[i] = more[i]!;
    grown[more.length] = name;
    grown[more.length + 1] = run;
    this.#more = grown;
    return this;
  }

  *values(): IterableIterator<ContainerRun> {
    for (const [, run] of this) yield run;
  }

  *[Symbol.iterator](): IterableIterator<[string, ContainerRun]> {
    // Unlike a Map's, a run added while iterating is not visited (set replaces the list); no
    // caller adds while iterating.
    if (this.#firstName === undefined) return;
    const more = this.#more;
    yield [this.#firstName, this.#firstRun!];
    if (more === undefined) return;
    for (let i = 0; i < more.length; i += 2) yield [more[i] as string, more[i + 1] as ContainerRun];
  }
}
