/**
 * Equal strings held once: `string(s)` gives the pool's copy of one string. The shared values'
 * walk (shared-values.ts) puts the strings of the fleet's pods and Nodes through it: each parsed
 * from the wire, they repeat the same paths, policies, condition messages, node info and
 * quantities, and many the same timestamps, each held again and again (docs/performance.md,
 * "What an empty node costs" and "A fourth round").
 *
 * The pool forgets everything once it holds `limit` strings, so that timestamps, which change
 * at every heartbeat, never pile up: strings handed out before stay where they were put, and
 * the next ones share among themselves again.
 */
export interface StringPool {
  /** The pool's copy of `s` (`s` itself, the first time its text is met). */
  string(s: string): string;
  /** The distinct strings it holds now. */
  size(): number;
}

export function createStringPool(limit = 8192): StringPool {
  let pool = new Map<string, string>();
  return {
    string(s) {
      const have = pool.get(s);
      if (have !== undefined) return have;
      if (pool.size >= limit) pool = new Map();
      pool.set(s, s);
      return s;
    },
    size: () => pool.size,
  };
}
