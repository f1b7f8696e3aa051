// Where a fleet's heap goes, from a V8 heap snapshot (fleet-memory.bench.ts writes them):
//
//   node build/bench/agent/heap-attribution.js <snapshot> [<snapshot with pods> <pods>]
//
// Every object is charged to one component: the nearest object above it in the dominator tree
// (the objects that keep it alive alone) that marks a component. Marks are the closures'
// contexts (the variables of a `createX` function, charged to the file that defines it, found
// through any closure over that context) and a few class instances (the pod manager, prom-client
// metrics, pino loggers, Node timers). An object kept alive by two components (a pod held by the
// fan-out's store and by a pod manager) is charged to their nearest common owner, often the fleet
// itself: the "copies" table counts the pod objects per pod apart from that.
//
// Given two snapshots (empty nodes, then with pods) it prints the difference per component,
// divided by the pod count: bytes per pod by component; then the objects by shape that grew,
// per pod, which tells a pod's one record from a copy held twice.
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';

interface Snapshot {
  nodeFieldCount: number;
  edgeFieldCount: number;
  nodes: Uint32Array;
  edges: Uint32Array;
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  /** Index of each node's first edge in `edges` (by node ordinal), plus one past the end. */
  firstEdge: Uint32Array;
}

// Node field offsets (V8's layout: type, name, id, self_size, edge_count, trace_node_id, detachedness).
const N_TYPE = 0;
const N_NAME = 1;
const N_SELF = 3;
const N_EDGES = 4;
// Edge field offsets: type, name_or_index, to_node.
const E_TYPE = 0;
const E_NAME = 1;
const E_TO = 2;

/** Reads the snapshot's numeric arrays without holding its whole text as one string. */
export function readSnapshot(path: string): Snapshot {
  const fd = openSync(path, 'r');
  const size = fstatSync(fd).size;
  const buf = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) off += readSync(fd, buf, off, size - off, off);
  closeSync(fd);
  const find = (marker: string, from = 0): number => {
    const at = buf.indexOf(marker, from);
    if (at < 0) throw new Error(`${path}: no ${marker} in the snapshot`);
    return at + marker.length;
  };
  const nodesAt = find('"nodes":[');
  const metaText = buf.toString('utf8', find('{"snapshot":'), nodesAt - '"nodes":['.length).trim().replace(/,$/, '');
  const meta = JSON.parse(metaText) as {
    meta: { node_fields: string[]; edge_fields: string[]; node_types: [string[]]; edge_types: [string[]] };
    node_count: number;
    edge_count: number;
  };
  const m = meta.meta;
  const numbers = (start: number, count: number): Uint32Array => {
    const out = new Uint32Array(count);
    let i = 0;
    let n = 0;
    let inNumber = false;
    for (let p = start; i < count; p++) {
      const c = buf[p]!;
      if (c >= 48 && c <= 57) {
        n = n * 10 + (c - 48);
        inNumber = true;
      } else if (inNumber) {
        out[i++] = n;
        n = 0;
        inNumber = false;
      }
    }
    return out;
  };
  const nodes = numbers(nodesAt, meta.node_count * m.node_fields.length);
  const edges = numbers(find('"edges":['), meta.edge_count * m.edge_fields.length);
  const stringsAt = find('"strings":[') - 1;
  const stringsEnd = buf.lastIndexOf(']');
  const strings = JSON.parse(buf.toString('utf8', stringsAt, stringsEnd + 1)) as string[];
  const nodeFieldCount = m.node_fields.length;
  const edgeFieldCount = m.edge_fields.length;
  const count = meta.node_count;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * nodeFieldCount + N_EDGES]! * edgeFieldCount;
    firstEdge[i + 1] = e;
  }
  return { nodeFieldCount, edgeFieldCount, nodes, edges, strings, nodeTypes: m.node_types[0], edgeTypes: m.edge_types[0], firstEdge };
}

/** A node's name: a constructor's for objects, the text for strings. */
const nodeName = (s: Snapshot, n: number): string => s.strings[s.nodes[n * s.nodeFieldCount + N_NAME]!]!;

/** Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm), weak edges left out. */
function dominators(s: Snapshot): Int32Array {
  const count = s.firstEdge.length - 1;
  const weak = s.edgeTypes.indexOf('weak');
  const target = (e: number): number => s.edges[e + E_TO]! / s.nodeFieldCount;
  // Post-order numbering from the root (node 0), iteratively.
  const order = new Int32Array(count).fill(-1);
  const byOrder = new Int32Array(count);
  const stackNode = new Int32Array(count);
  const stackEdge = new Int32Array(count);
  const visited = new Uint8Array(count);
  let sp = 0;
  let next = 0;
  stackNode[0] = 0;
  stackEdge[0] = s.firstEdge[0]!;
  visited[0] = 1;
  while (sp >= 0) {
    const n = stackNode[sp]!;
    const e = stackEdge[sp]!;
    if (e < s.firstEdge[n + 1]!) {
      stackEdge[sp] = e + s.edgeFieldCount;
      if (s.edges[e + E_TYPE] === weak) continue;
      const t = target(e);
      if (visited[t]) continue;
      visited[t] = 1;
      sp++;
      stackNode[sp] = t;
      stackEdge[sp] = s.firstEdge[t]!;
    } else {
      order[n] = next;
      byOrder[next++] = n;
      sp--;
    }
  }
  // Predecessors, by post-order number, of the reachable nodes.
  const predCount = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++) {
    if (order[n]! < 0) continue;
    for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]!; e += s.edgeFieldCount) if (s.edges[e + E_TYPE] !== weak) predCount[order[target(e)]! + 1]!++;
  }
  for (let i = 1; i <= count; i++) predCount[i]! += predCount[i - 1]!;
  const preds = new Int32Array(predCount[count]!);
  const fill = predCount.slice();
  for (let n = 0; n < count; n++) {
    if (order[n]! < 0) continue;
    for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]!; e += s.edgeFieldCount) {
      if (s.edges[e + E_TYPE] === weak) continue;
      const t = order[target(e)]!;
      preds[fill[t]!++] = order[n]!;
    }
  }
  const root = order[0]!;
  const idom = new Int32Array(next).fill(-1);
  idom[root] = root;
  let changed = true;
  while (changed) {
    changed = false;
    for (let b = root - 1; b >= 0; b--) {
      let chosen = -1;
      for (let i = predCount[b]!; i < predCount[b + 1]!; i++) {
        let p = preds[i]!;
        if (idom[p] === -1) continue;
        if (chosen === -1) {
          chosen = p;
          continue;
        }
        let q = chosen;
        while (p !== q) {
          while (p < q) p = idom[p]!;
          while (q < p) q = idom[q]!;
        }
        chosen = p;
      }
      if (chosen !== -1 && idom[b] !== chosen) {
        idom[b] = chosen;
        changed = true;
      }
    }
  }
  // Back to node ordinals; -1 for the unreachable.
  const result = new Int32Array(count).fill(-1);
  for (let o = 0; o < next; o++) if (idom[o]! >= 0) result[byOrder[o]!] = byOrder[idom[o]!]!;
  return result;
}

/** The component a class instance marks, by its constructor's name. */
const CLASS_COMPONENTS: Record<string, string> = {
  PodManager: 'pod manager (src/pod/)',
  // Our classes whose per-pod tables would otherwise be among "not owned".
  SimulatedStatusProvider: 'simulated runtime (src/runtime/simulated-status-provider.ts)',
  Allocator: 'pod addresses (src/runtime/pod-addresses.ts)',
  PodStorageImpl: 'merger (src/sources/pod-storage.ts)',
  Mux: 'merger (src/sources/pod-storage.ts)',
  ApiserverSourceImpl: 'API source (src/sources/apiserver-source.ts)',
  StatusWriter: 'status writer (src/status/mirror-status-writer.ts)',
  Registry: 'metrics (prom-client)',
  Counter: 'metrics (prom-client)',
  Gauge: 'metrics (prom-client)',
  Histogram: 'metrics (prom-client)',
  Summary: 'metrics (prom-client)',
  Pino: 'loggers (pino)',
  Timeout: 'timers (Node)',
  TimersList: 'timers (Node)',
};

/** Our files (and a few packages') by component. */
function componentOfScript(url: string): string | undefined {
  const m = /\/(src|bench)\/(.+)\.js$/.exec(url);
  if (m !== null) return `${m[1]}/${m[2]}.ts`;
  if (url.includes('/prom-client/')) return 'metrics (prom-client)';
  if (url.includes('/pino')) return 'loggers (pino)';
  if (url.includes('/@kubernetes/client-node/')) return 'client-node';
  return undefined;
}

export interface Attribution {
  /** Bytes charged to each component. */
  byComponent: Map<string, number>;
  /** What is not owned by one component, by node type and name (the largest first). */
  unowned: Map<string, number>;
  /**
   * The plain data reachable from pod objects (every copy; each object counted once), by the
   * pod field it hangs under: what the pods themselves weigh, wherever they are held.
   */
  podData: Map<string, number>;
  /** Per component, its bytes by kind of object (what `unowned` says for the rest). */
  kindsByComponent: Map<string, Map<string, number>>;
  /** Per pod UID: how many distinct pod objects, and who holds each (its component). */
  podCopies: Map<string, string[]>;
  totalBytes: number;
}

/** `detail`: a part of a component's name whose objects are told apart by the field holding them. */
export function attribute(s: Snapshot, detail?: string, retainers = false): Attribution {
  const count = s.firstEdge.length - 1;
  const idom = dominators(s);
  const str = (n: number): string => nodeName(s, n);
  const type = (n: number): string => s.nodeTypes[s.nodes[n * s.nodeFieldCount + N_TYPE]!]!;
  const edgeName = (e: number): string => {
    const t = s.edgeTypes[s.edges[e + E_TYPE]!];
    return t === 'element' || t === 'hidden' ? String(s.edges[e + E_NAME]) : s.strings[s.edges[e + E_NAME]!]!;
  };
  const child = (n: number, name: string): number => {
    for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]!; e += s.edgeFieldCount) if (edgeName(e) === name) return s.edges[e + E_TO]! / s.nodeFieldCount;
    return -1;
  };

  // Marks: contexts by the script of a closure over them, class instances by name.
  const mark = new Map<number, string>();
  for (let n = 0; n < count; n++) {
    const t = type(n);
    if (t === 'closure') {
      const context = child(n, 'context');
      const shared = child(n, 'shared');
      if (context < 0 || shared < 0 || mark.has(context)) continue;
      let script = child(shared, 'script');
      if (script < 0) script = child(shared, 'script_or_debug_info');
      const component = script >= 0 ? componentOfScript(str(script)) : undefined;
      if (component !== undefined) mark.set(context, component);
    } else if (t === 'object') {
      const component = CLASS_COMPONENTS[str(n)];
      if (component !== undefined) mark.set(n, component);
    }
  }

  // Owner of each node: its own mark, else its dominator's owner (dominators come first in a
  // walk down the dominator tree, which a pass in order of depth gives).
  const children = new Map<number, number[]>();
  for (let n = 1; n < count; n++) {
    const d = idom[n]!;
    if (d < 0 || d === n) continue;
    let list = children.get(d);
    if (list === undefined) children.set(d, (list = []));
    list.push(n);
  }
  const owner = new Array<string>(count);
  const byComponent = new Map<string, number>();
  const unowned = new Map<string, number>();
  const kindsByComponent = new Map<string, Map<string, number>>();
  const kindOf = (n: number): string => {
    const t = type(n);
    return t === 'object' || t === 'closure' || t === 'hidden' || t === 'native' ? `${t} ${str(n).slice(0, 40)}` : t;
  };
  // Which field of its dominator holds an object (of the component given in detail only: slow).
  const dominatorField = (n: number): string => {
    const d = idom[n]!;
    if (d < 0) return '?';
    for (let e = s.firstEdge[d]!; e < s.firstEdge[d + 1]!; e += s.edgeFieldCount) {
      if (s.edges[e + E_TO]! / s.nodeFieldCount === n) return `${kindOf(d)}.${edgeName(e)}`;
    }
    return `${kindOf(d)} (indirectly)`;
  };
  const UNOWNED = '(not owned by one component)';
  let totalBytes = 0;
  const stack: number[] = [0];
  owner[0] = UNOWNED;
  while (stack.length > 0) {
    const n = stack.pop()!;
    const self = s.nodes[n * s.nodeFieldCount + N_SELF]!;
    totalBytes += self;
    byComponent.set(owner[n]!, (byComponent.get(owner[n]!) ?? 0) + self);
    let kinds = kindsByComponent.get(owner[n]!);
    if (kinds === undefined) kindsByComponent.set(owner[n]!, (kinds = new Map()));
    const kind = detail !== undefined && owner[n]!.includes(detail) ? `${kindOf(n)} under ${dominatorField(n)}` : kindOf(n);
    kinds.set(kind, (kinds.get(kind) ?? 0) + self);

    for (const c of children.get(n) ?? []) {
      owner[c] = mark.get(c) ?? owner[n]!;
      stack.push(c);
    }
  }

  // Pod objects: plain objects with metadata and spec whose metadata has a uid.
  const podCopies = new Map<string, string[]>();
  const podObjects = new Set<number>();
  for (let n = 0; n < count; n++) {
    if (type(n) !== 'object' || str(n) !== 'Object' || owner[n] === undefined) continue;
    const metadata = child(n, 'metadata');
    const spec = child(n, 'spec');
    if (metadata < 0 || spec < 0 || child(spec, 'containers') < 0) continue;
    const uid = child(metadata, 'uid');
    if (uid < 0 || !type(uid).includes('string')) continue;
    const key = str(uid);
    podObjects.add(n);
    let holders = podCopies.get(key);
    if (holders === undefined) podCopies.set(key, (holders = []));
    holders.push(owner[n]!);
  }
  // The pods' data, by field: walked over plain data only (properties, elements, backing
  // stores), so that no walk reaches a prototype or a hidden class shared by everything.
  const podData = new Map<string, number>();
  const seen = new Uint8Array(count);
  const plain = (n: number): boolean => {
    const t = type(n);
    if (t === 'object') return ['Object', 'Array', 'Date'].includes(str(n));
    return t === 'array' || t === 'number' || t.includes('string') || (t === 'hidden' && str(n).includes('PropertyArray'));
  };
  const walk = (from: number, field: string): void => {
    const stack = [from];
    let bytes = 0;
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (seen[n]) continue;
      seen[n] = 1;
      bytes += s.nodes[n * s.nodeFieldCount + N_SELF]!;
      for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]!; e += s.edgeFieldCount) {
        const et = s.edgeTypes[s.edges[e + E_TYPE]!];
        const name = edgeName(e);
        const follow = et === 'property' ? name !== '__proto__' && name !== 'constructor' : et === 'element' || (et === 'internal' && (name === 'elements' || name === 'properties'));
        const t = s.edges[e + E_TO]! / s.nodeFieldCount;
        if (follow && !seen[t] && plain(t)) stack.push(t);
      }
    }
    podData.set(field, (podData.get(field) ?? 0) + bytes);
  };
  const pods = [...podObjects];
  for (const p of pods) seen[p] = 1;
  for (const p of pods) podData.set('(pod objects)', (podData.get('(pod objects)') ?? 0) + s.nodes[p * s.nodeFieldCount + N_SELF]!);
  for (const field of ['metadata.managedFields', 'metadata', 'spec', 'status']) {
    for (const p of pods) {
      const [top, sub] = field.split('.') as [string, string | undefined];
      const t = child(p, top);
      if (t < 0) continue;
      if (sub === undefined) {
        walk(t, field);
        continue;
      }
      const u = child(t, sub);
      if (u >= 0) walk(u, field);
    }
  }
  for (const p of pods) {
    for (let e = s.firstEdge[p]!; e < s.firstEdge[p + 1]!; e += s.edgeFieldCount) {
      const t = s.edges[e + E_TO]! / s.nodeFieldCount;
      if (!seen[t] && plain(t)) walk(t, 'other fields');
    }
  }
  // With `retainers`, each such object is told by what holds it: the field of its first
  // holder and the components of all its holders (what the dominator tree cannot name).
  const heldBy = retainers ? new Map<number, { field: string; owners: Set<string> }>() : undefined;
  if (heldBy !== undefined) {
    const weak = s.edgeTypes.indexOf('weak');
    for (let n = 0; n < count; n++) {
      if (owner[n] === undefined) continue;
      for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]!; e += s.edgeFieldCount) {
        if (s.edges[e + E_TYPE] === weak) continue;
        const t = s.edges[e + E_TO]! / s.nodeFieldCount;
        if (owner[t] !== UNOWNED || seen[t]) continue;
        let h = heldBy.get(t);
        if (h === undefined) heldBy.set(t, (h = { field: `${kindOf(n)}.${edgeName(e)}`, owners: new Set() }));
        h.owners.add(owner[n]!);
      }
    }
  }
  // What else no one component owns: the pods' data left out, by kind of object.
  for (let n = 0; n < count; n++) {
    if (owner[n] !== UNOWNED || seen[n]) continue;
    const h = heldBy?.get(n);
    const what = h === undefined ? kindOf(n) : `${kindOf(n)} ← ${h.field} [${[...h.owners].sort().join(', ')}]`;
    unowned.set(what, (unowned.get(what) ?? 0) + s.nodes[n * s.nodeFieldCount + N_SELF]!);
  }
  return { byComponent, unowned, kindsByComponent, podData, podCopies, totalBytes };
}

/** How many objects of one shape, and their own bytes (their fields, not what they point to). */
export interface ShapeCount {
  count: number;
  bytes: number;
}

/** Property names a shape is told by: enough to recognise an object, few enough to group a kind. */
const SHAPE_FIELDS = 7;

/**
 * Every object by its shape: its constructor's name and its first property names in order
 * (`Object {name,namespace,uid}`); an array by the field that holds it (`Array in .volumeMounts`),
 * since arrays have no names of their own. Only fields that point to an object are in a
 * snapshot: a field holding a small integer is left out of the shape. Where the dominator tree
 * says who keeps a kind of object, this says how many of it there are: a pod's data held twice
 * shows as twice the pods.
 */
export function census(s: Snapshot): Map<string, ShapeCount> {
  const count = s.firstEdge.length - 1;
  const objectType = s.nodeTypes.indexOf('object');
  const propertyType = s.edgeTypes.indexOf('property');
  const isArray = (n: number): boolean => s.nodes[n * s.nodeFieldCount + N_TYPE] === objectType && nodeName(s, n) === 'Array';
  // The first field seen holding each array (an array in two fields is named by one of them).
  const arrayField = new Map<number, string>();
  for (let n = 0; n < count; n++) {
    for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]!; e += s.edgeFieldCount) {
      if (s.edges[e + E_TYPE] !== propertyType) continue;
      const to = s.edges[e + E_TO]! / s.nodeFieldCount;
      if (isArray(to) && !arrayField.has(to)) arrayField.set(to, s.strings[s.edges[e + E_NAME]!]!);
    }
  }
  const shapes = new Map<string, ShapeCount>();
  for (let n = 0; n < count; n++) {
    if (s.nodes[n * s.nodeFieldCount + N_TYPE] !== objectType) continue;
    let shape: string;
    if (isArray(n)) {
      const field = arrayField.get(n);
      shape = field !== undefined ? `Array in .${field}` : 'Array';
    } else {
      const fields: string[] = [];
      const constructor = nodeName(s, n);
      for (let e = s.firstEdge[n]!; e < s.firstEdge[n + 1]! && fields.length < SHAPE_FIELDS; e += s.edgeFieldCount) {
        if (s.edges[e + E_TYPE] !== propertyType) continue;
        const field = s.strings[s.edges[e + E_NAME]!]!;
        // A class with private methods carries a brand named after it: not a field.
        if (field !== '__proto__' && field !== constructor) fields.push(field);
      }
      shape = `${constructor} {${fields.join(',')}}`;
    }
    const seen = shapes.get(shape);
    const self = s.nodes[n * s.nodeFieldCount + N_SELF]!;
    if (seen !== undefined) {
      seen.count += 1;
      seen.bytes += self;
    } else shapes.set(shape, { count: 1, bytes: self });
  }
  return shapes;
}

/** The shapes that grew from `before` to `after`, most bytes first: count and bytes per pod. */
export function censusGrowth(before: Map<string, ShapeCount>, after: Map<string, ShapeCount>, pods: number): { shape: string; perPod: number; bytesPerPod: number }[] {
  const rows: { shape: string; perPod: number; bytesPerPod: number }[] = [];
  for (const [shape, { count, bytes }] of after) {
    const was = before.get(shape) ?? { count: 0, bytes: 0 };
    if (bytes <= was.bytes) continue;
    rows.push({ shape, perPod: (count - was.count) / pods, bytesPerPod: (bytes - was.bytes) / pods });
  }
  return rows.sort((x, y) => y.bytesPerPod - x.bytesPerPod);
}

const kb = (b: number): string => (b / 1024).toFixed(0);

function table(a: Attribution, b: Attribution | undefined, pods: number): string {
  const names = new Set([...a.byComponent.keys(), ...(b?.byComponent.keys() ?? [])]);
  const rows = [...names].map((name) => {
    const before = a.byComponent.get(name) ?? 0;
    const after = b?.byComponent.get(name) ?? 0;
    return { name, before, after, perPod: b !== undefined && pods > 0 ? (after - before) / pods : 0 };
  });
  rows.sort((x, y) => (b !== undefined ? y.after - x.after : y.before - x.before));
  const lines =
    b !== undefined
      ? ['| component | empty KiB | with pods KiB | bytes per pod |', '|---|---:|---:|---:|']
      : ['| component | KiB |', '|---|---:|'];
  for (const r of rows) {
    if (Math.max(r.before, r.after) < 64 * 1024) continue;
    lines.push(b !== undefined ? `| ${r.name} | ${kb(r.before)} | ${kb(r.after)} | ${r.perPod.toFixed(0)} |` : `| ${r.name} | ${kb(r.before)} |`);
  }
  lines.push(b !== undefined ? `| total | ${kb(a.totalBytes)} | ${kb(b.totalBytes)} | ${pods > 0 ? ((b.totalBytes - a.totalBytes) / pods).toFixed(0) : '–'} |` : `| total | ${kb(a.totalBytes)} |`);
  return lines.join('\n');
}

function copiesTable(a: Attribution): string {
  const counts = new Map<string, number>();
  let objects = 0;
  for (const holders of a.podCopies.values()) {
    objects += holders.length;
    for (const h of holders) counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  const pods = a.podCopies.size;
  const lines = [`${pods} pods, ${objects} pod objects (${pods > 0 ? (objects / pods).toFixed(2) : '0'} per pod)`, '', '| held by | pod objects |', '|---|---:|'];
  for (const [h, n] of [...counts].sort((x, y) => y[1] - x[1])) lines.push(`| ${h} | ${n} |`);
  return lines.join('\n');
}

if (process.argv[1]?.endsWith('heap-attribution.js')) {
  const [first, second, podsArg] = process.argv.slice(2);
  if (first === undefined) {
    console.error('usage: heap-attribution.js <snapshot> [<snapshot with pods> <pods>]');
    process.exit(2);
  }
  const detail = process.env.HEAP_ATTRIBUTION_DETAIL || undefined;
  // HEAP_ATTRIBUTION_TOP=<n>: how many kinds each list shows (25 by default).
  const top = Number(process.env.HEAP_ATTRIBUTION_TOP ?? 25);
  // HEAP_ATTRIBUTION_RETAINERS=1: what is not owned by one component, told by what holds it.
  const retainers = process.env.HEAP_ATTRIBUTION_RETAINERS === '1';
  const firstSnapshot = readSnapshot(first);
  const secondSnapshot = second !== undefined ? readSnapshot(second) : undefined;
  const a = attribute(firstSnapshot, detail, retainers);
  const b = secondSnapshot !== undefined ? attribute(secondSnapshot, detail, retainers) : undefined;
  console.log(table(a, b, Number(podsArg ?? 0)));
  console.log('');
  console.log(copiesTable(b ?? a));
  console.log('');
  const data = (x: Attribution): number => [...x.podData.values()].reduce((m, v) => m + v, 0);
  console.log(`the pods' data (every copy, each object once), KiB${b !== undefined ? ' and bytes per pod' : ''}:`);
  for (const [field, bytes] of (b ?? a).podData) console.log(`  ${kb(bytes)} KiB  ${field}${b !== undefined && Number(podsArg) > 0 ? `  (${((bytes - (a.podData.get(field) ?? 0)) / Number(podsArg)).toFixed(0)} bytes per pod)` : ''}`);
  console.log(`  ${kb(data(b ?? a))} KiB  in all`);
  console.log('');
  console.log(`not owned by one component, the pods' data left out, the largest kinds${b !== undefined ? ' (and bytes per pod)' : ''}:`);
  for (const [what, bytes] of [...(b ?? a).unowned].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    console.log(`  ${kb(bytes)} KiB  ${what}${b !== undefined && Number(podsArg) > 0 ? `  (${((bytes - (a.unowned.get(what) ?? 0)) / Number(podsArg)).toFixed(0)})` : ''}`);
  }
  const pods = Number(podsArg);
  if (secondSnapshot !== undefined && pods > 0) {
    console.log('');
    console.log('objects by shape (constructor and first fields; arrays by the field holding them), the largest growth: objects and bytes per pod');
    for (const row of censusGrowth(census(firstSnapshot), census(secondSnapshot), pods).slice(0, top)) {
      console.log(`  ${row.perPod.toFixed(2)}  ${row.bytesPerPod.toFixed(0).padStart(4)} B  ${row.shape}`);
    }
  }
  // HEAP_ATTRIBUTION_DETAIL=<part of a component's name>: that component's kinds of objects
  // too, each with the field of the object that alone holds it.
  for (const [component, kinds] of (b ?? a).kindsByComponent) {
    if (detail === undefined || detail === '' || !component.includes(detail)) continue;
    console.log('');
    console.log(`${component}, the largest kinds${b !== undefined ? ' (and bytes per pod)' : ''}:`);
    const before = a.kindsByComponent.get(component);
    for (const [what, bytes] of [...kinds].sort((x, y) => y[1] - x[1]).slice(0, top)) {
      console.log(`  ${kb(bytes)} KiB  ${what}${b !== undefined && Number(podsArg) > 0 ? `  (${((bytes - (before?.get(what) ?? 0)) / Number(podsArg)).toFixed(0)})` : ''}`);
    }
  }
}
