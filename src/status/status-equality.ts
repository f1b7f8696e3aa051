import type { V1PodStatus } from '@kubernetes/client-node';
import { KUBELET_OWNED_POD_CONDITIONS } from './kubelet-owned-conditions.js';

/**
 * Status equality as the API server would store it, so that the writer neither versions a
 * status that only looks new (a timestamp's milliseconds, conditions in another order) nor
 * sends one the mirror already holds. The kubelet normalises a status (times to whole seconds)
 * before comparing and counts only its own conditions; these functions apply the same rules to
 * the client's objects and to the watch's JSON as they are, without building copies.
 */

/**
 * True when writing `ours` would change nothing in `theirs`, after the normalisation the API
 * server applies (timestamps to whole seconds, Go's omitempty empties absent). Only the fields
 * `ours` has count (qosClass, set by the server, does not); conditions are matched by type and
 * only the kubelet's own count, as only those are sent; resourceClaimStatuses are not ours.
 */
export function sameStatus(ours: V1PodStatus, theirs: V1PodStatus): boolean {
  const o = ours as Record<string, unknown>;
  const t = theirs as Record<string, unknown>;
  for (const key in o) {
    if (key === 'resourceClaimStatuses') continue;
    if (key === 'conditions') {
      if (!sameConditions(o[key], t[key], false)) return false;
    } else if (!isEmpty(o[key]) && !sameStoredValue(o[key], t[key])) {
      return false;
    }
  }
  return true;
}

/**
 * Deep equality of two values as the API server would store them (tells a new status from
 * the cached one): timestamps (Date objects, or RFC 3339 strings as watch events carry them)
 * at whole seconds, Go's omitempty empties ('' / null / undefined / {} / []) absent,
 * `conditions` in any order. Compares in place, without building normalised copies.
 */
export function sameStoredValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const ta = timeSeconds(a);
  const tb = timeSeconds(b);
  if (ta !== undefined || tb !== undefined) return ta === tb;
  if (isEmpty(a)) return isEmpty(b);
  if (isEmpty(b) || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && sameItems(a, b);
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const key in x) {
    if (!(key === 'conditions' ? sameConditions(x[key], y[key], true) : sameStoredValue(x[key], y[key]))) return false;
  }
  for (const key in y) {
    if (!(key in x) && !isEmpty(y[key])) return false;
  }
  return true;
}

// Arrays item by item, empty items skipped (Go would not have them).
function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  let i = 0;
  let j = 0;
  for (;;) {
    while (i < a.length && isEmpty(a[i])) i++;
    while (j < b.length && isEmpty(b[j])) j++;
    if (i === a.length || j === b.length) return i === a.length && j === b.length;
    if (!sameStoredValue(a[i++], b[j++])) return false;
  }
}

// Conditions by type. `all`: every condition, both ways; otherwise only the kubelet's
// conditions of `ours` must be in `theirs`.
function sameConditions(ours: unknown, theirs: unknown, all: boolean): boolean {
  const a = Array.isArray(ours) ? (ours as unknown[]) : [];
  const b = Array.isArray(theirs) ? (theirs as unknown[]) : [];
  let compared = 0;
  for (const c of a) {
    if (isEmpty(c)) continue;
    const type = (c as { type?: unknown }).type;
    if (!all && !KUBELET_OWNED_POD_CONDITIONS.has(type as string)) continue;
    compared++;
    if (!sameStoredValue(c, b.find((d) => (d as { type?: unknown } | null)?.type === type))) return false;
  }
  if (!all) return true;
  let present = 0;
  for (const d of b) if (!isEmpty(d)) present++;
  return present === compared;
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '') return true;
  if (typeof v !== 'object' || v instanceof Date) return false;
  if (Array.isArray(v)) {
    for (const item of v) if (!isEmpty(item)) return false;
    return true;
  }
  for (const key in v) if (!isEmpty((v as Record<string, unknown>)[key])) return false;
  return true;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Whole seconds since the epoch of a Date or an RFC 3339 UTC string; undefined for anything else. */
export function timeSeconds(v: unknown): number | undefined {
  let ms: number;
  if (v instanceof Date) ms = v.getTime();
  else if (typeof v === 'string' && v.length >= 20 && v.charCodeAt(10) === 84 /* T */ && RFC3339.test(v)) ms = Date.parse(v);
  else return undefined;
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
