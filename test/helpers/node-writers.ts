// Who wrote each node, from the API server's audit log, and whether the writer of a node only
// ever changed across a Lease handover: the check behind "at no moment do two fleet replicas
// write the same node" (test/reliability/fleet-replicas.test.ts).
import { micros, type AuditEvent } from './audit-log.js';

export type WriteKind = 'lease' | 'node' | 'node-status' | 'pod' | 'pod-status' | 'event';

/** One successful write of something belonging to a node. Times in µs (API server clock). */
export interface NodeWrite {
  node: string;
  /** The process that wrote (a replica restarted with the same identity is another author). */
  author: string;
  /** The replica's identity, the holderIdentity its Lease writes carry. */
  identity: string;
  kind: WriteKind;
  verb: string;
  /** When the API server received the request and when it answered. */
  start: number;
  end: number;
  /** Lease writes: the holder and renewTime (µs) written, and the duration in µs. */
  holder?: string;
  renewTime?: number;
  durationUs?: number;
}

/** The names that tie an object to a node: the nodes and the static pods' names (mirrors are `<pod>-<node>`). */
export interface FleetNames {
  nodes: ReadonlySet<string>;
  staticPods: readonly string[];
}

function nodeOfPod(name: string, names: FleetNames): string | undefined {
  for (const pod of names.staticPods) {
    if (name.startsWith(`${pod}-`) && names.nodes.has(name.slice(pod.length + 1))) return name.slice(pod.length + 1);
  }
  return undefined;
}

/** The node an audit event's object belongs to and what it is, or undefined. */
export function nodeObject(e: AuditEvent, names: FleetNames): { node: string; kind: WriteKind } | undefined {
  const ref = e.objectRef ?? {};
  const name = ref.name ?? '';
  switch (ref.resource) {
    case 'leases':
      return ref.namespace === 'kube-node-lease' && names.nodes.has(name) ? { node: name, kind: 'lease' } : undefined;
    case 'nodes':
      return names.nodes.has(name) ? { node: name, kind: ref.subresource === 'status' ? 'node-status' : 'node' } : undefined;
    case 'pods': {
      const node = nodeOfPod(name, names);
      return node === undefined ? undefined : { node, kind: ref.subresource === 'status' ? 'pod-status' : 'pod' };
    }
    case 'events': {
      // Events are named <involved object>.<suffix>.
      const involved = name.slice(0, name.lastIndexOf('.'));
      const node = names.nodes.has(involved) ? involved : nodeOfPod(involved, names);
      return node === undefined ? undefined : { node, kind: 'event' };
    }
    default:
      return undefined;
  }
}

/** A NodeWrite from an audit event already known to be a successful write of `node`. */
export function nodeWrite(e: AuditEvent, writer: { author: string; identity: string }, at: { node: string; kind: WriteKind }): NodeWrite {
  const spec = e.requestObject?.spec;
  return {
    ...at,
    ...writer,
    verb: e.verb,
    start: micros(e.requestReceivedTimestamp),
    end: micros(e.stageTimestamp),
    ...(at.kind === 'lease' && spec?.holderIdentity !== undefined ? { holder: spec.holderIdentity } : {}),
    ...(at.kind === 'lease' && spec?.renewTime !== undefined ? { renewTime: micros(spec.renewTime) } : {}),
    ...(at.kind === 'lease' ? { durationUs: (spec?.leaseDurationSeconds ?? 40) * 1_000_000 } : {}),
  };
}

export interface Handover {
  node: string;
  from: string;
  to: string;
  /** The new writer's first write (its Lease takeover), received at. */
  at: number;
  /** The previous writer's last write, answered at. */
  previousLastEnd: number;
  /** When the previous writer's last renewal let the Lease expire. */
  expiredAt: number;
}

export interface WritersReport {
  /** Each node's writers, in order. */
  writers: Map<string, string[]>;
  handovers: Handover[];
  /** Every broken rule, as a sentence naming the node; empty when the writes are clean. */
  problems: string[];
}

const secs = (us: number): string => `${(us / 1e6).toFixed(3)} s`;

/**
 * Checks that every node had one writer at a time and that the writer changed only through
 * the Lease: a node's first write is its Lease taken by its writer; a new writer's first write
 * is its taking of the Lease, received after every write of any other writer of that node was
 * answered, with a renewTime past the expiry of the previous writer's last renewal.
 */
export function checkNodeWriters(writes: readonly NodeWrite[]): WritersReport {
  const byNode = new Map<string, NodeWrite[]>();
  for (const w of writes) byNode.set(w.node, [...(byNode.get(w.node) ?? []), w]);
  const report: WritersReport = { writers: new Map(), handovers: [], problems: [] };
  for (const [node, list] of byNode) {
    list.sort((a, b) => a.start - b.start || a.end - b.end);
    const writers: string[] = [];
    const lastEnd = new Map<string, number>();
    let current: string | undefined;
    let expiresAt = 0;
    for (const w of list) {
      if (w.author !== current) {
        const takesLease = w.kind === 'lease' && w.holder === w.identity && w.renewTime !== undefined;
        if (!takesLease) {
          report.problems.push(`${node}: ${w.author} wrote its ${w.kind} (${w.verb}) at ${secs(w.start)} without holding its Lease (writer before: ${current ?? 'none'})`);
        }
        for (const [other, end] of lastEnd) {
          if (other !== w.author && end >= w.start) report.problems.push(`${node}: ${w.author} wrote at ${secs(w.start)} while a write of ${other} was answered only at ${secs(end)}`);
        }
        if (current !== undefined) {
          if (takesLease && w.renewTime! <= expiresAt) report.problems.push(`${node}: ${w.author} took the Lease at ${secs(w.renewTime!)}, before ${current}'s expired at ${secs(expiresAt)}`);
          report.handovers.push({ node, from: current, to: w.author, at: w.start, previousLastEnd: lastEnd.get(current) ?? 0, expiredAt: expiresAt });
        }
        current = w.author;
        writers.push(w.author);
      }
      lastEnd.set(w.author, Math.max(lastEnd.get(w.author) ?? 0, w.end));
      if (w.kind === 'lease' && w.renewTime !== undefined) expiresAt = w.renewTime + (w.durationUs ?? 40_000_000);
    }
    report.writers.set(node, writers);
  }
  return report;
}
