// The status fingerprint must tell statuses apart exactly as sameStoredValue does: the status
// writer keeps it in place of a status the API server holds and compares the next one with it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus } from '@kubernetes/client-node';
import { sameStoredValue } from '../../../src/status/status-equality.js';
import { statusFingerprint } from '../../../src/status/status-fingerprint.js';

const ready = { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-03-01T10:00:00.000Z') };
const scheduled = { type: 'PodScheduled', status: 'True' };
const base: V1PodStatus = {
  phase: 'Running',
  podIP: '10.0.0.7',
  podIPs: [{ ip: '10.0.0.7' }, { ip: '10.0.0.8' }],
  startTime: new Date('2026-03-01T10:00:00Z'),
  conditions: [ready, scheduled],
  containerStatuses: [{ name: 'app', image: 'nginx', imageID: '', ready: true, restartCount: 0, started: true, state: { running: { startedAt: new Date('2026-03-01T10:00:01Z') } } }],
};

// Pairs sameStoredValue finds equal, and pairs it tells apart.
const equal: Array<[string, unknown]> = [
  ['milliseconds of a time', { ...base, startTime: new Date('2026-03-01T10:00:00.700Z') }],
  ['a time as its RFC 3339 text (as the watch has it)', { ...base, startTime: '2026-03-01T10:00:00Z' }],
  ['conditions in another order', { ...base, conditions: [scheduled, ready] }],
  ['empty fields', { ...base, message: '', reason: undefined, nominatedNodeName: null, hostIPs: [], resize: {} }],
  ['empty list items', { ...base, conditions: [null, ready, {}, scheduled] }],
  ['keys in another order', Object.fromEntries(Object.entries(base).reverse())],
  ['the same values as JSON', JSON.parse(JSON.stringify(base))],
];
const different: Array<[string, unknown]> = [
  ['another phase', { ...base, phase: 'Pending' }],
  ['a time one second on', { ...base, startTime: new Date('2026-03-01T10:00:01Z') }],
  ['a condition less', { ...base, conditions: [ready] }],
  ['a condition of another status', { ...base, conditions: [{ ...ready, status: 'False' }, scheduled] }],
  ['a field more', { ...base, message: 'starting' }],
  ['a number as text', { ...base, containerStatuses: [{ ...base.containerStatuses![0]!, restartCount: '0' }] }],
  ['false against absent', { ...base, containerStatuses: [{ ...base.containerStatuses![0]!, started: false }] }],
  ['addresses in another order', { ...base, podIPs: [{ ip: '10.0.0.8' }, { ip: '10.0.0.7' }] }],
];

describe('statusFingerprint', () => {
  for (const [what, other] of equal) {
    it(`is the same where sameStoredValue finds them equal: ${what}`, () => {
      assert.ok(sameStoredValue(other, base), 'the premise');
      assert.equal(statusFingerprint(other as V1PodStatus), statusFingerprint(base));
    });
  }
  for (const [what, other] of different) {
    it(`differs where sameStoredValue tells them apart: ${what}`, () => {
      assert.ok(!sameStoredValue(other, base), 'the premise');
      assert.notEqual(statusFingerprint(other as V1PodStatus), statusFingerprint(base));
    });
  }
  it('is one number of 48 bits (the writer holds one per pod)', () => {
    const fingerprint = statusFingerprint(base);
    assert.ok(Number.isSafeInteger(fingerprint) && fingerprint >= 0 && fingerprint < 2 ** 48);
  });
});
