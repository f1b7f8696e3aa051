import { createHash } from 'node:crypto';
import type { V1PodStatus } from '@kubernetes/client-node';
import { timeSeconds } from './status-equality.js';

/**
 * A short digest of a status under the rules of `sameStoredValue` (status-equality.ts): times
 * (Dates or RFC 3339 UTC strings) at whole seconds, Go's omitempty empties absent, empty array
 * items skipped, keys in any order, `conditions` in any order. Two statuses that
 * `sameStoredValue` finds equal have the same fingerprint, and different ones (but for a digest
 * collision) different fingerprints. The status writer keeps it in place of a status the API
 * already holds, so that it can still tell whether the provider's next status is a new one.
 */
export function statusFingerprint(status: V1PodStatus): number {
  // 48 bits of the digest, one number (a string would be 40 bytes a pod): two different
  // statuses share a fingerprint once in 2^48 comparisons.
  return createHash('sha256').update(normalised(status) ?? '').digest().readUIntBE(0, 6);
}

// The text of a value as the API server would store it; undefined for an empty one.
function normalised(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const seconds = timeSeconds(v);
  if (seconds !== undefined) return `t${seconds}`;
  if (typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    const items = itemsOf(v);
    return items.length === 0 ? undefined : `[${items.join(',')}]`;
  }
  const parts: string[] = [];
  for (const key of Object.keys(v).sort()) {
    const value = (v as Record<string, unknown>)[key];
    let text: string | undefined;
    if (key === 'conditions') {
      // Matched by type, so their order says nothing.
      const items = Array.isArray(value) ? itemsOf(value).sort() : [];
      text = items.length === 0 ? undefined : `[${items.join(',')}]`;
    } else {
      text = normalised(value);
    }
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return parts.length === 0 ? undefined : `{${parts.join(',')}}`;
}

function itemsOf(values: readonly unknown[]): string[] {
  const items: string[] = [];
  for (const item of values) {
    const text = normalised(item);
    if (text !== undefined) items.push(text);
  }
  return items;
}
