import type { Pod } from './types.js';

/**
 * A deep copy of a pod as plain data: objects and arrays copied, Dates copied, fields holding
 * `undefined` left out. Pods are JSON data (client-node's typed responses add Dates and model
 * classes, which come out as plain objects), so this is all structuredClone would do for
 * them, at a sixth of its cost: the merger copies every pod it takes in and gives out.
 */
export function clonePod(pod: Pod): Pod {
  return cloneValue(pod) as Pod;
}

function cloneValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return new Date(value.getTime());
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneValue(value[i]);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    // JSON.parse makes "__proto__" an own field; assigning it would set the copy's prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: cloneValue(v), enumerable: true, writable: true, configurable: true });
    else out[key] = cloneValue(v);
  }
  return out;
}
