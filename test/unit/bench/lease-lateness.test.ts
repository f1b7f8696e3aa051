// The fleet benchmarks' Lease lateness (bench/agent/fleet.bench.ts): a renewal is late by the gap
// since the Lease's previous renewal less 10.4 s, measured as the renewals arrived in the
// harness's watch, or between their own renewTimes (the fleet's share of the lateness); gaps that
// span a reopened watch or leave the window count for nothing; and the bulk benchmark's check of
// request times against a token bucket (bench/agent/bulk.bench.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { leaseLateness, stampedLeaseLateness, type RenewalSeen } from '../../../bench/agent/fleet.bench.js';
import { adherence } from '../../../bench/agent/bulk.bench.js';

describe('Lease lateness', () => {
  // Lease a: renewed on time by the fleet, but the second renewal reached the harness 3 s late.
  // Lease b: renewed 2 s late by the fleet itself, and seen so.
  const renewals = new Map<string, RenewalSeen[]>([
    ['a', [{ at: 0, watch: 1, renewedAt: 1_000_000 }, { at: 13_000, watch: 1, renewedAt: 1_010_000 }]],
    ['b', [{ at: 100, watch: 1, renewedAt: 1_000_100 }, { at: 12_500, watch: 1, renewedAt: 1_012_500 }]],
    // Seen through two listings of the watch: says nothing.
    ['c', [{ at: 0, watch: 1, renewedAt: 0 }, { at: 60_000, watch: 2, renewedAt: 60_000 }]],
  ]);

  it('as the renewals arrived', () => {
    const late = leaseLateness(renewals, 0);
    assert.equal(late.length, 2);
    assert.ok(Math.abs(late[0]! - 2_000) < 1e-6 && Math.abs(late[1]! - 2_600) < 1e-6, `${late.join(', ')}`);
  });

  it("between the Leases' renewTimes: only what the fleet itself was late", () => {
    const late = stampedLeaseLateness(renewals, 0);
    assert.equal(late.length, 2);
    assert.equal(late[0], 0);
    assert.ok(Math.abs(late[1]! - 2_000) < 1e-6, `${late.join(', ')}`);
  });

  it('only gaps inside the window', () => {
    assert.deepEqual(leaseLateness(renewals, 50), [2_000]);
    assert.deepEqual(stampedLeaseLateness(renewals, 0, 12_600), [2_000]);
  });
});

describe('token bucket adherence', () => {
  it('a burst then the sustained rate is within the bucket; a second burst is not', () => {
    const burst = Array.from({ length: 100 }, () => 0);
    const steady = Array.from({ length: 50 }, (_, i) => 1_000 + i * 20);
    assert.ok(adherence([...burst, ...steady], 50, 100).maxExcess <= 1);
    const twoBuckets = [...burst, ...burst, ...steady];
    assert.ok(adherence(twoBuckets, 50, 100).maxExcess >= 99);
    assert.equal(adherence([], 50, 100).maxExcess, 0);
  });
});
