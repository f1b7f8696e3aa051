// The API server's audit log as the record of who wrote what, and when: a policy that logs
// every write (Lease writes with their body, for the holder and renewTime; others at Metadata
// level), and a reader for the JSON lines kube-apiserver writes (startLocalCluster's
// `auditPolicyFile`, docs/control-plane.md).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const WRITE_VERBS = '[create, update, patch, delete, deletecollection]';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
  - level: Request
    verbs: ${WRITE_VERBS}
    resources: [{group: coordination.k8s.io, resources: [leases]}]
  - level: Metadata
    verbs: ${WRITE_VERBS}
  - level: None
`;

/** Writes the policy to a new temporary file and returns its path (call at a file's top level). */
export function writeAuditPolicy(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'kp-audit-')), 'policy.yaml');
  writeFileSync(path, POLICY);
  return path;
}

/** The fields of an audit.k8s.io/v1 Event that tests read. */
export interface AuditEvent {
  verb: string;
  userAgent?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  /** At Request level only (Lease writes under this policy). */
  requestObject?: { spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number } };
}

/** Every event in the log, in the order written. */
export function readAuditLog(path: string): AuditEvent[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditEvent);
}

/** True when the API server carried the request out (2xx). */
export const succeeded = (e: AuditEvent): boolean => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;

/**
 * An RFC 3339 time with up to nine fractional digits (audit timestamps and Lease MicroTimes
 * carry six) as microseconds since the epoch, so that events a few µs apart keep their order.
 */
export function micros(time: string): number {
  const m = /^(.*?)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(time);
  if (m === null) throw new Error(`not an RFC 3339 time: ${JSON.stringify(time)}`);
  const seconds = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(seconds)) throw new Error(`not an RFC 3339 time: ${JSON.stringify(time)}`);
  return seconds * 1000 + Number((m[2] ?? '').padEnd(6, '0').slice(0, 6));
}
