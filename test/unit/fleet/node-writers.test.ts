// The check behind the fleet replica test (test/helpers/node-writers.ts): it passes a clean
// Lease handover and names each way two replicas could write one node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { micros, type AuditEvent } from '../../helpers/audit-log.js';
import { checkNodeWriters, nodeObject, type NodeWrite } from '../../helpers/node-writers.js';

const S = 1_000_000;
const lease = (author: string, at: number, renewTime = at): NodeWrite => ({ node: 'n-1', author, identity: author, kind: 'lease', verb: 'update', start: at * S, end: at * S + 2_000, holder: author, renewTime: renewTime * S, durationUs: 40 * S });
const pod = (author: string, at: number, took = 0.002): NodeWrite => ({ node: 'n-1', author, identity: author, kind: 'pod-status', verb: 'patch', start: at * S, end: (at + took) * S });

describe('checkNodeWriters', () => {
  it('passes a takeover after the Lease expired, and reports it', () => {
    const r = checkNodeWriters([lease('r1', 0), pod('r1', 1), lease('r1', 10), lease('r2', 51), pod('r2', 52)]);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.writers.get('n-1'), ['r1', 'r2']);
    assert.equal(r.handovers.length, 1);
    assert.deepEqual({ ...r.handovers[0] }, { node: 'n-1', from: 'r1', to: 'r2', at: 51 * S, previousLastEnd: 10 * S + 2_000, expiredAt: 50 * S });
  });

  it('names a takeover before the Lease expired', () => {
    const r = checkNodeWriters([lease('r1', 0), lease('r1', 10), lease('r2', 45)]);
    assert.match(r.problems.join('\n'), /n-1: r2 took the Lease at 45\.000 s, before r1's expired at 50\.000 s/);
  });

  it('names a write of the old holder still in flight when the new one starts', () => {
    const r = checkNodeWriters([lease('r1', 0), lease('r1', 10), pod('r1', 50.5, 1), lease('r2', 51)]);
    assert.match(r.problems.join('\n'), /r2 wrote at 51\.000 s while a write of r1 was answered only at 51\.500 s/);
  });

  it('tells a restarted replica from the process it replaces, by author, not identity', () => {
    const restarted = { ...lease('r1', 60), author: 'r1 (restarted)' };
    const r = checkNodeWriters([lease('r1', 0), lease('r2', 41), { ...lease('r2', 51), renewTime: 51 * S }, restarted]);
    assert.match(r.problems.join('\n'), /r1 \(restarted\) took the Lease at 60\.000 s, before r2's expired at 91\.000 s/);
    assert.deepEqual(r.writers.get('n-1'), ['r1', 'r2', 'r1 (restarted)']);
  });

  it('names a write without the Lease, before or after a handover', () => {
    assert.match(checkNodeWriters([lease('r1', 0), pod('r2', 5)]).problems.join('\n'), /r2 wrote its pod-status \(patch\) at 5\.000 s without holding its Lease/);
    assert.match(checkNodeWriters([pod('r1', 0)]).problems.join('\n'), /r1 wrote its pod-status .* \(writer before: none\)/);
    assert.match(checkNodeWriters([lease('r1', 0), lease('r2', 60), pod('r1', 61)]).problems.join('\n'), /r1 wrote its pod-status .* \(writer before: r2\)/);
  });
});

describe('nodeObject', () => {
  const names = { nodes: new Set(['fr-1', 'fr-12']), staticPods: ['web-0', 'web-1'] };
  const ev = (resource: string, name: string, extra: Partial<NonNullable<AuditEvent['objectRef']>> = {}): AuditEvent => ({
    verb: 'patch',
    objectRef: { resource, name, ...extra },
    requestReceivedTimestamp: '',
    stageTimestamp: '',
  });

  it('ties Leases, Nodes, mirror pods and Events to their node', () => {
    assert.deepEqual(nodeObject(ev('leases', 'fr-12', { namespace: 'kube-node-lease' }), names), { node: 'fr-12', kind: 'lease' });
    assert.deepEqual(nodeObject(ev('nodes', 'fr-1', { subresource: 'status' }), names), { node: 'fr-1', kind: 'node-status' });
    assert.deepEqual(nodeObject(ev('pods', 'web-1-fr-12'), names), { node: 'fr-12', kind: 'pod' });
    assert.deepEqual(nodeObject(ev('pods', 'web-0-fr-1', { subresource: 'status' }), names), { node: 'fr-1', kind: 'pod-status' });
    assert.deepEqual(nodeObject(ev('events', 'web-0-fr-12.1870a9b2c3d4e5f6'), names), { node: 'fr-12', kind: 'event' });
    assert.equal(nodeObject(ev('pods', 'web-0-fr-2'), names), undefined);
    assert.equal(nodeObject(ev('leases', 'fr-1', { namespace: 'default' }), names), undefined);
  });
});

describe('micros', () => {
  it('keeps microseconds', () => {
    assert.equal(micros('2026-11-24T23:21:55.123456Z') - micros('2026-11-24T23:21:55.123455Z'), 1);
    assert.equal(micros('2026-11-24T23:21:55Z') % 1_000_000, 0);
    assert.throws(() => micros('yesterday'), /not an RFC 3339 time/);
  });
});
