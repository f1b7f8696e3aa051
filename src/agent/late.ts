/**
 * A part made after the parts that refer to it, for a genuine cycle of the composition root
 * (src/agent/agent.ts says which): set once, right after it is made, and read only when those
 * parts run, never while they are being made.
 */
export interface Late<T> {
  get(): T;
  set(value: T): void;
}

export function late<T>(what: string): Late<T> {
  let value: { readonly v: T } | undefined;
  return {
    get() {
      if (value === undefined) throw new Error(`${what} read before it was made`);
      return value.v;
    },
    set(v) {
      if (value !== undefined) throw new Error(`${what} set twice`);
      value = { v };
    },
  };
}
