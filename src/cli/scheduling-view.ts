// What the demo shows of the point of mirror pods: the scheduler sees the static pods through
// them. From the Nodes and pods as the API server has them (what kube-scheduler reads), per
// demo node the CPU and memory requests of its mirror pods and of its ordinary pods against its
// allocatable, the ordinary pods (the demo's Deployment) with where they were placed, and how
// many more of the Deployment's pods would fit, with and without the mirrors counted.
// Pure functions: demo-objects.ts keeps the objects, live-view.ts and fleet-view.ts draw.

import type { V1Deployment, V1LabelSelector, V1Node } from '@kubernetes/client-node';
import { podRequests } from '../admission/pod-admission.js';
import { isMirrorPod, isTerminalPhase } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { quantityValue } from '../values/quantity.js';

/** CPU in millicores, memory in bytes, and a number of pods. */
export interface Amount {
  pods: number;
  milliCPU: number;
  memory: number;
}

/** One demo node as the scheduler accounts for it. */
export interface NodeShare {
  name: string;
  ready: boolean;
  /** The Node's allocatable (0 where it reports none yet). */
  allocatable: Amount;
  /** The requests of the mirror pods bound to it and not finished. */
  mirrors: Amount;
  /** The requests of the other pods bound to it and not finished. */
  ordinary: Amount;
}

/** An ordinary pod: where the scheduler put it and how it runs. */
export interface PlacedPod {
  namespace: string;
  name: string;
  /** Undefined until the scheduler binds it. */
  node: string | undefined;
  phase: string;
  /** Why the scheduler has not placed it (the PodScheduled condition's message), if it says. */
  unschedulable: string | undefined;
}

/** The demo's Deployment: what it asks for, and its pods. */
export interface DeploymentShare {
  namespace: string;
  name: string;
  replicas: number;
  /** What one of its pods requests. */
  perPod: { milliCPU: number; memory: number };
  /** Its pods (by its selector), placed or not. */
  pods: PlacedPod[];
}

export interface SchedulingSnapshot {
  /** The demo's nodes, by name. */
  nodes: NodeShare[];
  /** Ordinary pods bound to a demo node or not bound yet, by namespace and name. */
  ordinary: PlacedPod[];
  deployment?: DeploymentShare;
}

const zero = (): Amount => ({ pods: 0, milliCPU: 0, memory: 0 });

const finished = (pod: Pod): boolean => isTerminalPhase(pod.status?.phase);

/** A resource quantity of a Node's allocatable in the unit of Amount; 0 when absent or unreadable. */
function allocatableOf(node: V1Node, name: 'pods' | 'cpu' | 'memory'): number {
  const text = node.status?.allocatable?.[name];
  const value = text === undefined ? Number.NaN : quantityValue(text);
  if (!Number.isFinite(value) || value < 0) return 0;
  return name === 'cpu' ? Math.round(value * 1000) : Math.round(value);
}

const isReady = (node: V1Node): boolean => node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Whether `labels` match a label selector (matchLabels and matchExpressions; an empty selector matches all). */
export function matchesSelector(selector: V1LabelSelector | undefined, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (selector === undefined) return false;
  const l = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (l[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const values = e.values ?? [];
    const ok =
      e.operator === 'In' ? has && values.includes(l[e.key]!) :
      e.operator === 'NotIn' ? !has || !values.includes(l[e.key]!) :
      e.operator === 'Exists' ? has :
      e.operator === 'DoesNotExist' ? !has :
      false;
    if (!ok) return false;
  }
  return true;
}

function placed(pod: Pod): PlacedPod {
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    node: pod.spec?.nodeName || undefined,
    phase: pod.status?.phase ?? 'Pending',
    unschedulable: scheduled?.status === 'False' && !pod.spec?.nodeName ? (scheduled.message ?? scheduled.reason) : undefined,
  };
}

const byName = (a: { namespace?: string; name: string }, b: { namespace?: string; name: string }): number =>
  `${a.namespace ?? ''}/${a.name}`.localeCompare(`${b.namespace ?? ''}/${b.name}`, 'en', { numeric: true });

/**
 * The scheduler's accounting of the demo's nodes: as kube-scheduler's resource fit counts, every
 * pod bound to a node and not finished (Succeeded or Failed) holds its requests there
 * (podRequests: containers, sidecars, init peak, overhead), mirror pods like any other.
 */
export function schedulingSnapshot(input: {
  nodes: Iterable<V1Node>;
  pods: Iterable<Pod>;
  isDemoNode: (name: string) => boolean;
  deployment?: V1Deployment | undefined;
}): SchedulingSnapshot {
  const shares = new Map<string, NodeShare>();
  for (const node of input.nodes) {
    const name = node.metadata?.name ?? '';
    if (!input.isDemoNode(name)) continue;
    shares.set(name, {
      name,
      ready: isReady(node) && node.spec?.unschedulable !== true,
      allocatable: { pods: allocatableOf(node, 'pods'), milliCPU: allocatableOf(node, 'cpu'), memory: allocatableOf(node, 'memory') },
      mirrors: zero(),
      ordinary: zero(),
    });
  }
  const ordinary: PlacedPod[] = [];
  const deploymentPods: PlacedPod[] = [];
  const d = input.deployment;
  const dNamespace = d?.metadata?.namespace ?? 'default';
  for (const pod of input.pods) {
    const node = pod.spec?.nodeName;
    const mirror = isMirrorPod(pod);
    if (d !== undefined && !mirror && pod.metadata?.namespace === dNamespace && matchesSelector(d.spec?.selector, pod.metadata?.labels)) {
      deploymentPods.push(placed(pod));
    }
    if (!node) {
      if (!mirror) ordinary.push(placed(pod));
      continue;
    }
    if (!input.isDemoNode(node)) continue;
    if (!mirror) ordinary.push(placed(pod));
    const share = shares.get(node);
    if (share === undefined || finished(pod)) continue;
    const held = mirror ? share.mirrors : share.ordinary;
    const r = podRequests(pod);
    held.pods++;
    held.milliCPU += r.milliCPU;
    held.memory += r.memory;
  }
  const snapshot: SchedulingSnapshot = { nodes: [...shares.values()].sort(byName), ordinary: ordinary.sort(byName) };
  if (d !== undefined) {
    snapshot.deployment = {
      namespace: dNamespace,
      name: d.metadata?.name ?? '',
      replicas: d.spec?.replicas ?? 1,
      perPod: podRequests({ spec: d.spec?.template?.spec ?? { containers: [] } }),
      pods: deploymentPods.sort(byName),
    };
  }
  return snapshot;
}

/** The Deployment's progress: pods bound to a node and Running, against its replicas. */
export function deploymentProgress(d: DeploymentShare): { desired: number; placed: number; running: number } {
  const live = d.pods.filter((p) => !isTerminalPhase(p.phase));
  return { desired: d.replicas, placed: live.filter((p) => p.node !== undefined).length, running: live.filter((p) => p.node !== undefined && p.phase === 'Running').length };
}

/** Every replica placed on a node and Running. */
export const isDeploymentRunning = (p: { desired: number; placed: number; running: number }): boolean => p.placed === p.desired && p.running === p.desired;

/** CPU as kubectl prints it: whole cores as `2`, else millicores `250m`. */
export function formatCPU(milliCPU: number): string {
  return milliCPU % 1000 === 0 ? String(milliCPU / 1000) : `${milliCPU}m`;
}

/** Memory in binary units: `256Mi`, `23.5Gi`, `512Ki`, whole numbers where exact. */
export function formatMemory(bytes: number): string {
  const units: Array<[string, number]> = [
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ];
  for (const [unit, size] of units) {
    if (bytes < size) continue;
    const value = bytes / size;
    return `${Number.isInteger(value) ? value : value >= 100 ? Math.round(value) : Number(value.toFixed(1))}${unit}`;
  }
  return String(bytes);
}

/** `250m/2 (12%)`: a part of a total, the percentage rounded down (`<1%` for a small part that is not 0). */
export function formatShare(used: number, total: number, format: (n: number) => string): string {
  if (total <= 0) return `${format(used)}/?`;
  const pct = Math.floor((used * 100) / total);
  return `${format(used)}/${format(total)} (${pct === 0 && used > 0 ? '<1' : pct}%)`;
}

/** How many more pods of `perPod` fit in `free` (pods, CPU and memory; a request of 0 is no limit). */
function fits(free: Amount, perPod: { milliCPU: number; memory: number }): number {
  let n = Math.max(0, free.pods);
  if (perPod.milliCPU > 0) n = Math.min(n, Math.floor(Math.max(0, free.milliCPU) / perPod.milliCPU));
  if (perPod.memory > 0) n = Math.min(n, Math.floor(Math.max(0, free.memory) / perPod.memory));
  return n;
}

/**
 * How many more pods of the Deployment the scheduler has room for on the Ready demo nodes, and
 * how many it would have if it did not count the mirror pods.
 */
export function roomFor(snapshot: SchedulingSnapshot, perPod: { milliCPU: number; memory: number }): { counted: number; uncounted: number } {
  let counted = 0;
  let uncounted = 0;
  for (const n of snapshot.nodes) {
    if (!n.ready) continue;
    const free = (withMirrors: boolean): Amount => ({
      pods: n.allocatable.pods - n.ordinary.pods - (withMirrors ? n.mirrors.pods : 0),
      milliCPU: n.allocatable.milliCPU - n.ordinary.milliCPU - (withMirrors ? n.mirrors.milliCPU : 0),
      memory: n.allocatable.memory - n.ordinary.memory - (withMirrors ? n.mirrors.memory : 0),
    });
    counted += fits(free(true), perPod);
    uncounted += fits(free(false), perPod);
  }
  return { counted, uncounted };
}

/** Lines up with their columns padded to the widest cell. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
}

/** The first sentence of the scheduler's message (the preemption part that follows says nothing new here). */
const firstSentence = (message: string): string => {
  const end = message.indexOf('. ');
  return end === -1 ? message : message.slice(0, end + 1);
};

/** The pods table: name, node, phase, and why an unplaced pod waits. */
export function renderPods(pods: readonly PlacedPod[], limit = 10): string[] {
  const rows = [['POD', 'NAMESPACE', 'NODE', 'PHASE']];
  for (const p of pods.slice(0, limit)) {
    rows.push([p.name, p.namespace, p.node ?? '-', p.unschedulable ? `${p.phase}: ${firstSentence(p.unschedulable)}` : p.phase]);
  }
  const lines = table(rows);
  if (pods.length > limit) lines.push(`… and ${pods.length - limit} more`);
  return lines;
}

/**
 * Per node two rows, what its mirror pods and its ordinary pods request against its allocatable
 * (`250m/2 (12%)`). With more than `limit` nodes: the nodes holding ordinary pods first, and a
 * line for the rest.
 */
export function renderNodeShares(nodes: readonly NodeShare[], limit = 4): string[] {
  const shown = [...nodes].sort((a, b) => Number(b.ordinary.pods > 0) - Number(a.ordinary.pods > 0) || byName(a, b)).slice(0, limit);
  shown.sort(byName);
  const rows = [['NODE', 'REQUESTS OF', 'PODS', 'CPU', 'MEMORY']];
  for (const n of shown) {
    for (const [label, held] of [['mirror pods', n.mirrors], ['ordinary pods', n.ordinary]] as const) {
      rows.push([n.name, label, String(held.pods), formatShare(held.milliCPU, n.allocatable.milliCPU, formatCPU), formatShare(held.memory, n.allocatable.memory, formatMemory)]);
    }
  }
  const lines = table(rows);
  if (nodes.length > shown.length) lines.push(`… and ${nodes.length - shown.length} more nodes`);
  return lines;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/**
 * The line that says it: `scheduler sees: mirror pods of static pods hold 250m of 2 cpu and
 * 256Mi of 23.5Gi memory on demo-node; 2 ordinary pods placed beside them; room for 5 more
 * hello pods (6 if it did not count the mirror pods)`.
 */
export function schedulerSeesLine(s: SchedulingSnapshot): string {
  if (s.nodes.length === 0) return 'scheduler sees: no node of the demo registered yet';
  const sum = (pick: (n: NodeShare) => number): number => s.nodes.reduce((acc, n) => acc + pick(n), 0);
  const where = s.nodes.length === 1 ? `on ${s.nodes[0]!.name}` : `on ${s.nodes.length} nodes`;
  const parts = [
    `scheduler sees: mirror pods of static pods hold ${formatCPU(sum((n) => n.mirrors.milliCPU))} of ${formatCPU(sum((n) => n.allocatable.milliCPU))} cpu` +
      ` and ${formatMemory(sum((n) => n.mirrors.memory))} of ${formatMemory(sum((n) => n.allocatable.memory))} memory ${where}`,
    `${plural(sum((n) => n.ordinary.pods), 'ordinary pod')} placed beside them`,
  ];
  const d = s.deployment;
  if (d !== undefined && s.nodes.some((n) => n.ready)) {
    const room = roomFor(s, d.perPod);
    parts.push(`room for ${room.counted} more ${d.name} pods${room.uncounted !== room.counted ? ` (${room.uncounted} if it did not count the mirror pods)` : ''}`);
  }
  return parts.join('; ');
}

/**
 * The demo's scheduling section: the Deployment and its pods, the node shares, the line, and
 * (once every pod of the Deployment is placed) how to see the scheduler refuse one too many.
 */
export function renderScheduling(s: SchedulingSnapshot, o: { deploymentState?: string; adminKubeconfig?: string } = {}): string[] {
  const lines: string[] = [];
  const d = s.deployment;
  if (d !== undefined) {
    const p = deploymentProgress(d);
    lines.push(
      `DEPLOYMENT ${d.namespace}/${d.name}: ${p.placed}/${p.desired} pods placed by kube-scheduler, ${p.running}/${p.desired} Running` +
        ` · each requests cpu ${formatCPU(d.perPod.milliCPU)}, memory ${formatMemory(d.perPod.memory)}` +
        (o.deploymentState ? ` · ${o.deploymentState}` : ''),
    );
  }
  if (d !== undefined || s.ordinary.length > 0) lines.push(...renderPods(s.ordinary));
  lines.push(...renderNodeShares(s.nodes));
  lines.push(schedulerSeesLine(s));
  if (d !== undefined && o.adminKubeconfig !== undefined) {
    const p = deploymentProgress(d);
    const room = roomFor(s, d.perPod);
    if (p.placed === p.desired && p.desired === d.pods.length && s.nodes.some((n) => n.ready)) {
      const over = d.replicas + room.counted + 1;
      lines.push(
        `one too many: kubectl --kubeconfig ${o.adminKubeconfig} -n ${d.namespace} scale deployment ${d.name} --replicas ${over}` +
          ` (pod ${over} stays Pending: the scheduler finds no room)`,
      );
    }
  }
  return lines;
}
