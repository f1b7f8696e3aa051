// Who wrote what, per phase of a benchmark, from the API server's audit log: the writes one
// subject (kwok, the fleet) sent while pods started, stopped or idled, counted by verb and
// resource. The log is the one record that names the writer (user and User-Agent) for every
// peer alike, whatever client library the peer uses, so the counts are comparable.
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { succeeded, type AuditEvent } from '../../test/helpers/audit-log.js';
import { percentiles } from './common.js';

// Writes, and reads of single pods (the kubelet's status manager reads a pod before writing
// its status), at Metadata level (no bodies): small enough for 100,000 pods.
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: Metadata
    verbs: [get]
    resources: [{ group: "", resources: [pods] }]
  - level: None
`;

/** Writes the policy to a new temporary file and returns its path. */
export async function writeWritesAuditPolicy(): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'kp-bench-audit-')), 'policy.yaml');
  await writeFile(path, POLICY);
  return path;
}

/** A span of wall-clock time (ms since the epoch), named for the table. */
export interface Phase {
  name: string;
  fromMs: number;
  toMs: number;
}

/** Per phase: the subject's writes by `verb resource[/subresource]`, and their total. */
export interface PhaseWrites {
  phase: string;
  durationMs: number;
  total: number;
  byKind: Record<string, number>;
  /** The subject's reads of single pods (GET), not among the writes. */
  podReads: number;
  /** The time from each Lease's last successful renewal to the next one that ended in this phase. */
  leaseGaps: LeaseGaps;
}

/** How far apart each node's successful Lease writes came (the API server's answer times). */
export interface LeaseGaps {
  count: number;
  p99Ms: number;
  maxMs: number;
}

const kindOf = (e: AuditEvent): string => {
  const r = e.objectRef;
  const resource = r?.resource ?? '?';
  return `${e.verb} ${r?.subresource ? `${resource}/${r.subresource}` : resource}`;
};

/**
 * The log and the files kube-apiserver rotated it to (`audit-<time>.log`, at 100 MB each by
 * default), oldest first: a long run's early phases are in those.
 */
export async function auditLogFiles(logFile: string): Promise<string[]> {
  const dir = dirname(logFile);
  const stem = `${basename(logFile, extname(logFile))}-`;
  const rotated = (await readdir(dir)).filter((n) => n.startsWith(stem) && n.endsWith('.log')).sort();
  return [...rotated.map((n) => join(dir, n)), logFile];
}

/**
 * Streams the log (rotated parts included) once and counts the writes `isSubject` picks that the API server received
 * within each phase (a request is counted by when it arrived, whatever it answered), and apart from them its reads of pods.
 */
export async function countWrites(logFile: string, phases: readonly Phase[], isSubject: (e: AuditEvent) => boolean): Promise<PhaseWrites[]> {
  const counts = phases.map((p) => ({ phase: p.name, durationMs: Math.round(p.toMs - p.fromMs), total: 0, byKind: {} as Record<string, number>, podReads: 0 }));
  const gaps = new LeaseGapRecorder(phases);
  for (const file of await auditLogFiles(logFile)) await countFile(file, phases, isSubject, counts, gaps);
  return counts.map((c, i) => ({ ...c, leaseGaps: gaps.summary(i) }));
}

/** A Lease write the server carried out: a renewal (update) or the first one (create). */
const isLeaseWritten = (e: AuditEvent): boolean =>
  (e.verb === 'update' || e.verb === 'create') && e.objectRef?.resource === 'leases' && e.objectRef.subresource === undefined && succeeded(e);

/**
 * Each Lease's gap between successful writes, by when the later one was answered. A renewal that
 * failed or timed out shows as a longer gap, which is what a node controller reading the Lease sees.
 */
class LeaseGapRecorder {
  readonly #phases: readonly Phase[];
  readonly #last = new Map<string, number>();
  readonly #gaps: number[][];

  constructor(phases: readonly Phase[]) {
    this.#phases = phases;
    this.#gaps = phases.map(() => []);
  }

  add(e: AuditEvent): void {
    const r = e.objectRef!;
    const key = `${r.namespace ?? ''}/${r.name ?? ''}`;
    const at = Date.parse(e.stageTimestamp);
    const last = this.#last.get(key);
    this.#last.set(key, at);
    if (last === undefined) return;
    this.#phases.forEach((p, i) => {
      if (at >= p.fromMs && at <= p.toMs) this.#gaps[i]!.push(at - last);
    });
  }

  summary(phase: number): LeaseGaps {
    const gaps = this.#gaps[phase]!;
    if (gaps.length === 0) return { count: 0, p99Ms: 0, maxMs: 0 };
    const { samples, p99, max } = percentiles(gaps);
    return { count: samples, p99Ms: p99, maxMs: max };
  }
}

async function countFile(file: string, phases: readonly Phase[], isSubject: (e: AuditEvent) => boolean, counts: Omit<PhaseWrites, 'leaseGaps'>[], gaps: LeaseGapRecorder): Promise<void> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    const e = JSON.parse(line) as AuditEvent;
    if (!isSubject(e)) continue;
    if (isLeaseWritten(e)) gaps.add(e);
    const at = Date.parse(e.requestReceivedTimestamp);
    const read = e.verb === 'get';
    phases.forEach((p, i) => {
      if (at < p.fromMs || at > p.toMs) return;
      const c = counts[i]!;
      if (read) {
        c.podReads++;
        return;
      }
      c.total++;
      const kind = kindOf(e);
      c.byKind[kind] = (c.byKind[kind] ?? 0) + 1;
    });
  }
}

/** "PATCH pods/status 2.00, DELETE pods 1.00" per unit, largest first. */
export function describeWrites(w: PhaseWrites, per: number): string {
  const kinds = Object.entries(w.byKind).sort((a, b) => b[1] - a[1]);
  if (kinds.length === 0) return 'none';
  return kinds.map(([k, n]) => `${k} ${(n / per).toFixed(2)}`).join(', ');
}
