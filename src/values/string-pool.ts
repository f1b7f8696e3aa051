/**
 * Equal strings held once: `string(s)` gives the pool's copy of one string; `share(value)`
 * replaces, in place, every string inside a JSON value (object fields and array items, not
 * keys, which the parser already holds once) with the pool's copy. A fleet's Nodes, each parsed from the wire, repeat the same condition messages,
 * reasons, node info and quantities, and many the same timestamps, each held again and again
 * (docs/performance.md, "What an empty node costs").
 *
 * The pool forgets everything once it holds `limit` strings, so that timestamps, which change
 * at every heartbeat, never pile up: objects shared before keep their copies, and the next
 * ones share among themselves again.
 */
export interface StringPool {
  share<T>(value: T): T;
  /** The pool's copy of `s` (`s` itself, the first time its text is met). */
  string(s: string): string;
  /** The distinct strings it holds now. */
  size(): number;
}

export function createStringPool(limit = 8192): StringPool {
  let pool = new Map<string, string>();
  const held = (s: string): string => {
    const have = pool.get(s);
    if (have !== undefined) return have;
    if (pool.size >= limit) pool = new Map();
    pool.set(s, s);
    return s;
  };
  const walk = (value: object): void => {
    // A frozen object is someone's shared value already, and cannot be written.
    if (Object.isFrozen(value)) return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'string') value[i] = held(item);
        else if (typeof item === 'object' && item !== null) walk(item);
      }
      return;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const field = record[key];
      if (typeof field === 'string') record[key] = held(field);
      else if (typeof field === 'object' && field !== null) walk(field);
    }
  };
  return {
    share: (value) => {
      if (typeof value === 'object' && value !== null) walk(value);
      return value;
    },
    string: held,
    size: () => pool.size,
  };
}
