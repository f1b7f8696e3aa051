// Comparing what the real kubelet and our agent wrote to the API server, after normalising
// what must differ between two nodes. One area per kind of object (mirror pod metadata and
// spec, mirror status; the Node, the Lease and event sequences later): an area has a
// normaliser, and each difference is reported as a key "<area>:<subject> <path>" that
// docs/kubelet-differences.md lists.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What tells the two sides apart: each side's node. */
export interface Side {
  nodeName: string;
  nodeUID: string;
}

/** One field that differs after normalisation; `undefined` means absent on that side. */
export interface Difference {
  area: string;
  /** What was compared, e.g. the manifest file a mirror pod comes from. */
  subject: string;
  /** Where in the object, e.g. `metadata.annotations["kubernetes.io/config.seen"]`. */
  path: string;
  real: Json | undefined;
  ours: Json | undefined;
}

/** The key docs/kubelet-differences.md uses for a difference. */
export function differenceKey(d: Pick<Difference, 'area' | 'subject' | 'path'>): string {
  return `${d.area}:${d.subject} ${d.path}`;
}

/** Placeholders that replace values that must differ between the two sides. */
export const NODE_NAME = '<node>';
export const NODE_UID = '<node-uid>';
export const OBJECT_UID = '<uid>';
export const TIMESTAMP = '<timestamp>';
export const STATIC_POD_HASH = '<hash>';

/** A JSON deep copy (drops undefined and functions, as the API server would). */
export function toJson(value: unknown): Json {
  return JSON.parse(JSON.stringify(value ?? null)) as Json;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Replaces the side's node name inside every string (names such as `web-<node>`) and its UID. */
export function replaceNodeIdentity(value: Json, side: Side): Json {
  if (typeof value === 'string') {
    if (value === side.nodeUID) return NODE_UID;
    return value.split(side.nodeName).join(NODE_NAME);
  }
  if (Array.isArray(value)) return value.map((v) => replaceNodeIdentity(v, side));
  if (isObject(value)) {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) out[k.split(side.nodeName).join(NODE_NAME)] = replaceNodeIdentity(v, side);
    return out;
  }
  return value;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const HASH_ANNOTATION = 'kubernetes.io/config.hash';
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
const SEEN_ANNOTATION = 'kubernetes.io/config.seen';

/**
 * A mirror pod's metadata and spec as they can be compared across two nodes:
 * - gone: status (its own area later), resourceVersion, creationTimestamp,
 *   generation-independent server fields (selfLink), and the mirror's own UID;
 * - managedFields: only who wrote it and how (keepFieldManagers);
 * - the node name inside any string and the Node's UID (owner reference) become placeholders;
 * - the static pod hash (config.hash, and config.mirror when it equals it) becomes `<hash>`:
 *   it covers the node name, so it differs by construction. A manifest with an explicit
 *   `metadata.uid` keeps it as its hash on both nodes, so an equal value is kept as is;
 * - config.seen (when the kubelet first saw the manifest) becomes `<timestamp>` if it is an
 *   RFC 3339 time, so that a different format still shows.
 */
export function normaliseMirrorPod(pod: unknown, side: Side): Json {
  const p = toJson(pod);
  if (!isObject(p)) return p;
  const metadata = isObject(p['metadata']) ? { ...p['metadata'] } : {};
  for (const field of ['resourceVersion', 'creationTimestamp', 'selfLink', 'uid']) delete metadata[field];
  keepFieldManagers(metadata);
  const annotations = isObject(metadata['annotations']) ? { ...metadata['annotations'] } : undefined;
  if (annotations !== undefined) {
    const hash = annotations[HASH_ANNOTATION];
    const looksDerived = typeof hash === 'string' && /^[0-9a-f]{32}$/.test(hash);
    if (looksDerived) {
      annotations[HASH_ANNOTATION] = STATIC_POD_HASH;
      if (annotations[MIRROR_ANNOTATION] === hash) annotations[MIRROR_ANNOTATION] = STATIC_POD_HASH;
    }
    const seen = annotations[SEEN_ANNOTATION];
    if (typeof seen === 'string' && RFC3339.test(seen)) annotations[SEEN_ANNOTATION] = TIMESTAMP;
    metadata['annotations'] = annotations;
  }
  return replaceNodeIdentity({ metadata, spec: p['spec'] ?? null }, side);
}

// --- area `status` ------------------------------------------------------------------------

/** A side of the status comparison: its node and the node IP it reports pods on. */
export interface StatusSide extends Side {
  nodeIP: string;
}

export const NODE_IP = '<node-ip>';
export const POD_IPV4 = '<pod-ipv4>';
export const POD_IPV6 = '<pod-ipv6>';
export const CONTAINER_ID = '<runtime>://<id>';

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const IPV6 = /^[0-9a-fA-F:]+(:\d{1,3}(\.\d{1,3}){3})?$/;
// `<runtime>://<id>`, as the kubelet prints a container ID.
const CONTAINER_ID_FORMAT = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/\S+$/;
const CONTAINER_STATUS_LISTS = ['containerStatuses', 'initContainerStatuses', 'ephemeralContainerStatuses'];

function replaceTimes(value: Json): Json {
  if (typeof value === 'string') return RFC3339.test(value) ? TIMESTAMP : value;
  if (Array.isArray(value)) return value.map(replaceTimes);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceTimes(v)]));
  return value;
}

/**
 * A pod address as it can be compared across nodes: the side's node IP becomes `<node-ip>`
 * (both sides report their own node's address by the same rule); any other address becomes its
 * kind, `<pod-ipv4>` or `<pod-ipv6>`, since each node hands out pod addresses of its own.
 */
function podAddress(ip: Json, side: StatusSide): Json {
  if (ip === side.nodeIP) return NODE_IP;
  if (typeof ip === 'string' && IPV4.test(ip)) return POD_IPV4;
  if (typeof ip === 'string' && ip.includes(':') && IPV6.test(ip)) return POD_IPV6;
  return ip;
}

function containerIDFormat(id: Json | undefined): Json | undefined {
  return typeof id === 'string' && CONTAINER_ID_FORMAT.test(id) ? CONTAINER_ID : id;
}

/**
 * A mirror pod's status as it can be compared across two nodes:
 * - every RFC 3339 time becomes `<timestamp>` (startTime, conditions, container states);
 * - hostIP/hostIPs: the side's node IP becomes `<node-ip>`; any other value is kept, so a host
 *   IP that is not the node's shows;
 * - podIP/podIPs: the node IP becomes `<node-ip>`, another address its kind (see podAddress);
 * - container IDs (of container statuses and of terminated states) in the `<runtime>://<id>`
 *   form become `<runtime>://<id>`: the runtime and its IDs differ by construction (the real
 *   kubelet runs kubemark's fake runtime); their presence and form are still compared;
 * - the node name inside strings and the Node's UID become placeholders.
 * Image IDs and restart counts are compared as they are.
 */
export function normaliseMirrorStatus(pod: unknown, side: StatusSide): Json {
  const p = toJson(pod);
  if (!isObject(p) || !isObject(p['status'])) return null;
  const status = replaceTimes(p['status']) as { [key: string]: Json };
  if (status['hostIP'] === side.nodeIP) status['hostIP'] = NODE_IP;
  if (Array.isArray(status['hostIPs'])) {
    status['hostIPs'] = status['hostIPs'].map((h) => (isObject(h) && h['ip'] === side.nodeIP ? { ...h, ip: NODE_IP } : h));
  }
  if (status['podIP'] !== undefined) status['podIP'] = podAddress(status['podIP'], side);
  if (Array.isArray(status['podIPs'])) {
    status['podIPs'] = status['podIPs'].map((h) => (isObject(h) && h['ip'] !== undefined ? { ...h, ip: podAddress(h['ip'], side) } : h));
  }
  for (const list of CONTAINER_STATUS_LISTS) {
    const statuses = status[list];
    if (!Array.isArray(statuses)) continue;
    status[list] = statuses.map((cs) => {
      if (!isObject(cs)) return cs;
      const out: { [key: string]: Json } = { ...cs };
      if (out['containerID'] !== undefined) out['containerID'] = containerIDFormat(out['containerID'])!;
      for (const stateKey of ['state', 'lastState']) {
        const state = out[stateKey];
        const terminated = isObject(state) ? state['terminated'] : undefined;
        if (isObject(state) && isObject(terminated) && terminated['containerID'] !== undefined) {
          out[stateKey] = { ...state, terminated: { ...terminated, containerID: containerIDFormat(terminated['containerID'])! } };
        }
      }
      return out;
    });
  }
  return replaceNodeIdentity(status, side);
}

const SIMPLE_KEY = /^[A-Za-z_$][\w$]*$/;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (SIMPLE_KEY.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/**
 * Every leaf where the two values differ: a field present on one side only is reported at
 * that field, not below it; arrays are compared index by index.
 */
export function diffJson(real: Json | undefined, ours: Json | undefined, path = ''): Array<{ path: string; real: Json | undefined; ours: Json | undefined }> {
  if (isObject(real) && isObject(ours)) {
    const keys = [...new Set([...Object.keys(real), ...Object.keys(ours)])].sort();
    return keys.flatMap((k) => diffJson(real[k], ours[k], childPath(path, k)));
  }
  if (Array.isArray(real) && Array.isArray(ours)) {
    const out: Array<{ path: string; real: Json | undefined; ours: Json | undefined }> = [];
    for (let i = 0; i < Math.max(real.length, ours.length); i++) out.push(...diffJson(real[i], ours[i], childPath(path, i)));
    return out;
  }
  return JSON.stringify(real) === JSON.stringify(ours) ? [] : [{ path: path === '' ? '(object)' : path, real, ours }];
}

/** Compares normalised pairs of one area; a subject missing on one side is one difference at `(object)`. */
export function compareArea(
  area: string,
  pairs: ReadonlyArray<{ subject: string; real: Json | undefined; ours: Json | undefined }>,
): Difference[] {
  return pairs.flatMap(({ subject, real, ours }) => {
    if (real === undefined || ours === undefined) {
      return real === ours ? [] : [{ area, subject, path: '(object)', real: real === undefined ? undefined : 'present', ours: ours === undefined ? undefined : 'present' }];
    }
    return diffJson(real, ours).map((d) => ({ area, subject, ...d }));
  });
}

/** A documented difference: its id and its key pattern (`*` matches any run of characters but a space). */
export interface ListedDifference {
  id: string;
  pattern: string;
  /**
   * The id ends in `?`: the difference depends on timing on the real kubelet's side and may be
   * absent from a run, so it is never reported stale (it is still the only way to tolerate it).
   */
  sometimes: boolean;
}

/**
 * The rows of docs/kubelet-differences.md's tables whose first cell is an id (`KD-<n>`, or
 * `KD-<n>?` for a difference that not every run shows) and whose second cell is a backticked
 * key pattern.
 */
export function parseListedDifferences(markdown: string): ListedDifference[] {
  const rows = [...markdown.matchAll(/^\|\s*([A-Z][A-Z0-9-]*-\d+)(\?)?\s*\|\s*`([^`]+)`\s*\|/gm)];
  return rows.map((m) => ({ id: m[1]!, pattern: m[3]!, sometimes: m[2] === '?' }));
}

/** A listed key pattern as a RegExp: `*` stands for any run of characters without a space. */
export function patternRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^ ]*');
  return new RegExp(`^${escaped}$`);
}

export interface Reconciliation {
  /** Differences found that no listed pattern covers. */
  unlisted: Difference[];
  /** Listed differences (ids) that matched nothing: fixed, to be removed from the list. */
  stale: string[];
}

/** Matches found differences against the list, both ways. */
export function reconcile(found: readonly Difference[], listed: readonly ListedDifference[], areas: readonly string[]): Reconciliation {
  const compiled = listed.map((l) => ({ ...l, re: patternRegExp(l.pattern) }));
  const used = new Set<string>();
  const unlisted: Difference[] = [];
  for (const d of found) {
    const key = differenceKey(d);
    const hits = compiled.filter((l) => l.re.test(key));
    if (hits.length === 0) unlisted.push(d);
    for (const h of hits) used.add(h.id);
  }
  // Only entries of the areas this run compared can be stale: later steps add areas.
  const inScope = compiled.filter((l) => areas.some((a) => l.pattern.startsWith(`${a}:`)));
  return { unlisted, stale: inScope.filter((l) => !used.has(l.id) && !l.sometimes).map((l) => l.id) };
}

export function describeDifference(d: Difference): string {
  const show = (v: Json | undefined): string => (v === undefined ? '(absent)' : JSON.stringify(v));
  return `${differenceKey(d)}: real ${show(d.real)}, ours ${show(d.ours)}`;
}

/**
 * A static pod as a node holds it (its `/pods`), for two nodes given the same node name and
 * manifest path, so that nothing must differ: the UID and `config.hash` (both derived from the
 * decoded, defaulted pod, the node name and the file path) are kept; only the status (its own
 * area) and `config.seen` (when the node read the file) are replaced.
 */
export function normaliseStaticPod(pod: unknown): Json {
  const p = toJson(pod);
  if (!isObject(p)) return p;
  const metadata = isObject(p['metadata']) ? { ...p['metadata'] } : {};
  const annotations = isObject(metadata['annotations']) ? { ...metadata['annotations'] } : undefined;
  if (annotations !== undefined) {
    const seen = annotations[SEEN_ANNOTATION];
    if (typeof seen === 'string' && RFC3339.test(seen)) annotations[SEEN_ANNOTATION] = TIMESTAMP;
    metadata['annotations'] = annotations;
  }
  const out: { [key: string]: Json } = { metadata, spec: p['spec'] ?? null };
  for (const k of ['apiVersion', 'kind']) if (p[k] !== undefined) out[k] = p[k]!;
  return out;
}

// --- areas `node` and `lease` ---------------------------------------------------------------

/** A side of the Node comparison: its node, its node IP and the kubelet port it was given. */
export interface NodeSide extends StatusSide {
  kubeletPort: number;
}

export const KUBELET_PORT = '<kubelet-port>';
/** A value that describes the machine (or, on the real side, kubemark's fakes). */
export const MACHINE_VALUE = '<machine>';

/** Capacity entries and nodeInfo fields that come from the machine, or on the real side from the fakes. */
const MACHINE_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];
const MACHINE_NODE_INFO = ['kernelVersion', 'osImage', 'containerRuntimeVersion', 'bootID', 'machineID', 'systemUUID'];

function dropServerFields(metadata: Json | undefined): void {
  if (!isObject(metadata)) return;
  for (const k of ['resourceVersion', 'creationTimestamp', 'uid', 'generation']) delete metadata[k];
  keepFieldManagers(metadata);
}

/**
 * `managedFields` reduced to who wrote the object and how (`kubelet Update`, sorted, each once):
 * the manager is the writer's User-Agent up to its first '/', so this compares what each node
 * calls itself in every write; the entries' times and field sets are left out.
 */
function keepFieldManagers(metadata: Record<string, Json>): void {
  const entries = metadata['managedFields'];
  if (!Array.isArray(entries)) return;
  const managers = entries.filter(isObject).map((e) => `${String(e['manager'])} ${String(e['operation'])}`);
  metadata['managedFields'] = [...new Set(managers)].sort();
}

/**
 * A Node as it can be compared across two nodes:
 * - gone: uid, resourceVersion, creationTimestamp; managedFields only who wrote it and how;
 * - every RFC 3339 time (condition heartbeat and transition times) becomes `<timestamp>`;
 * - the InternalIP address equal to the side's node IP becomes `<node-ip>`, and the kubelet
 *   endpoint port equal to the side's port `<kubelet-port>` (each side is given its own);
 * - the values that describe the machine become `<machine>` when present (non-empty): the
 *   `cpu`, `memory` and `ephemeral-storage` capacity and allocatable, and `nodeInfo`'s
 *   kernelVersion, osImage, containerRuntimeVersion, bootID, machineID and systemUUID. On the
 *   real side these are kubemark's fakes (docs/hollow-kubelet.md), on ours the machine's, so
 *   the values cannot agree; whether each is reported at all is still compared;
 * - the node name inside strings and its UID become placeholders.
 */
export function normaliseNode(node: unknown, side: NodeSide): Json {
  const n = toJson(node);
  if (!isObject(n)) return null;
  dropServerFields(n['metadata']);
  const status = n['status'];
  if (isObject(status)) {
    if (Array.isArray(status['addresses'])) {
      status['addresses'] = status['addresses'].map((a) => (isObject(a) && a['type'] === 'InternalIP' && a['address'] === side.nodeIP ? { ...a, address: NODE_IP } : a));
    }
    const endpoint = isObject(status['daemonEndpoints']) ? status['daemonEndpoints']['kubeletEndpoint'] : undefined;
    if (isObject(endpoint) && endpoint['Port'] === side.kubeletPort) endpoint['Port'] = KUBELET_PORT;
    for (const list of ['capacity', 'allocatable']) {
      const resources = status[list];
      if (!isObject(resources)) continue;
      for (const r of MACHINE_RESOURCES) if (resources[r] !== undefined && resources[r] !== '0') resources[r] = MACHINE_VALUE;
    }
    const info = status['nodeInfo'];
    if (isObject(info)) for (const f of MACHINE_NODE_INFO) if (typeof info[f] === 'string' && info[f] !== '') info[f] = MACHINE_VALUE;
  }
  return replaceNodeIdentity(replaceTimes(n), side);
}

/**
 * A node's Lease as it can be compared across two nodes: server fields gone, renewTime (and an
 * acquireTime, if any) `<timestamp>`, the node name and the Node's UID (the owner reference)
 * placeholders.
 */
export function normaliseLease(lease: unknown, side: Side): Json {
  const l = toJson(lease);
  if (!isObject(l)) return null;
  dropServerFields(l['metadata']);
  return replaceNodeIdentity(replaceTimes(l), side);
}
