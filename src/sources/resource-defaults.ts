import {
  addQuantity,
  canonicalQuantity,
  compareQuantity,
  formatQuantity,
  parseQuantity,
  roundUpQuantity,
  type Quantity,
} from '../values/quantity.js';
import { isJsonObject, type JsonObject } from './json-object.js';

/**
 * SetDefaults_ResourceList on `owner[key]`: every quantity rounded up to a thousandth (1m) and
 * written as the API stores it. A value that is not a quantity is left for validation.
 */
export function defaultResourceList(owner: JsonObject, key: string): void {
  const list = owner[key];
  if (!isJsonObject(list)) return;
  for (const [name, value] of Object.entries(list)) {
    const q = parseQuantity(value);
    if (q === undefined) continue;
    const rounded = roundUpQuantity(q, MILLI_DIGITS);
    // Go keeps the text as written unless rounding changed the value.
    list[name] = rounded === q ? (canonicalQuantity(value as string | number) ?? value) : formatQuantity(rounded);
  }
}

const MILLI_DIGITS = 3;

/**
 * The pod-level resource defaults of SetDefaults_Pod (PodLevelResources, on by default in
 * v1.34), for a pod whose `spec.resources` is partly set: hugepage limits from the containers'
 * limits, then requests from the containers' effective requests (CPU and memory) or from the
 * pod's own limits.
 */
export function defaultPodLevelResources(spec: JsonObject): void {
  const resources = spec.resources;
  if (!isJsonObject(resources)) return;
  defaultHugePageLimits(spec, resources);
  defaultPodRequests(spec, resources);
}

const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
const isPodLevelResource = (name: string): boolean => name === 'cpu' || name === 'memory' || isHugePages(name);
// Native resources (no domain, or a kubernetes.io one) other than hugepages may be overcommitted.
const overcommitAllowed = (name: string): boolean => (!name.includes('/') || name.includes('kubernetes.io/')) && !isHugePages(name);

function entries(list: unknown): [string, unknown][] {
  return isJsonObject(list) ? Object.entries(list) : [];
}

function defaultHugePageLimits(spec: JsonObject, resources: JsonObject): void {
  const requests = isJsonObject(resources.requests) ? resources.requests : {};
  if (entries(resources.limits).length === 0 && Object.keys(requests).length === 0) return;
  const limits: JsonObject = isJsonObject(resources.limits) ? resources.limits : {};
  for (const [name, value] of aggregate(spec, 'limits')) {
    if (!isHugePages(name) || name in requests || name in limits) continue;
    limits[name] = value;
  }
  if (Object.keys(limits).length > 0) resources.limits = limits;
}

function defaultPodRequests(spec: JsonObject, resources: JsonObject): void {
  const limits = entries(resources.limits);
  if (limits.length === 0) return;
  const requests: JsonObject = isJsonObject(resources.requests) ? resources.requests : {};
  for (const [name, value] of aggregate(spec, 'requests')) {
    if (!(name in requests) && isPodLevelResource(name) && overcommitAllowed(name)) requests[name] = value;
  }
  for (const [name, value] of limits) if (!(name in requests) && isPodLevelResource(name)) requests[name] = value;
  if (Object.keys(requests).length > 0) resources.requests = requests;
}

/** A quantity in a running sum, with the value as written while nothing was added to it. */
interface Term {
  q: Quantity;
  written: unknown;
}

/**
 * What the pod's containers need together (the sidecar rules: regular containers and
 * restartable init containers add up; each other init container needs its own amount on top
 * of the sidecars started before it; the larger of the two wins). Values that were only
 * carried over stay as written; sums are written as the API writes a computed quantity.
 */
function aggregate(spec: JsonObject, kind: 'requests' | 'limits'): [string, unknown][] {
  const total = new Map<string, Term>();
  const of = (c: JsonObject): [string, Quantity, unknown][] => {
    const list = isJsonObject(c.resources) ? c.resources[kind] : undefined;
    const out: [string, Quantity, unknown][] = [];
    for (const [name, value] of entries(list)) {
      const q = parseQuantity(value);
      if (q !== undefined) out.push([name, q, value]);
    }
    return out;
  };
  for (const c of containers(spec.containers)) for (const [name, q, v] of of(c)) add(total, name, q, v);
  const sidecars = new Map<string, Term>();
  const initPeak = new Map<string, Term>();
  for (const c of containers(spec.initContainers)) {
    let use: Map<string, Term>;
    if (c.restartPolicy === 'Always') {
      for (const [name, q, v] of of(c)) {
        add(total, name, q, v);
        add(sidecars, name, q, v);
      }
      use = sidecars;
    } else {
      use = new Map();
      for (const [name, q, v] of of(c)) add(use, name, q, v);
      for (const [name, t] of sidecars) add(use, name, t.q, t.written);
    }
    for (const [name, t] of use) raise(initPeak, name, t);
  }
  for (const [name, t] of initPeak) raise(total, name, t);
  return [...total].map(([name, t]) => [name, t.written]);
}

function containers(list: unknown): JsonObject[] {
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

function add(sum: Map<string, Term>, name: string, q: Quantity, written: unknown): void {
  const t = sum.get(name);
  if (t === undefined) {
    sum.set(name, { q, written });
    return;
  }
  const next = addQuantity(t.q, q);
  sum.set(name, { q: next, written: formatQuantity(next) });
}

function raise(peak: Map<string, Term>, name: string, t: Term): void {
  const current = peak.get(name);
  if (current === undefined || compareQuantity(t.q, current.q) > 0) peak.set(name, t);
}
