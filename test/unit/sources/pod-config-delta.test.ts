// SETs carrying a delta (src/sources/types.ts SetDelta) must merge exactly as the full SETs
// would, and must spare the merger from looking at the pods they do not name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Pod } from '../../../src/pod/types.js';
import { canonicalJSON } from '../../../src/values/canonical-json.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { createPodConfig, type PodConfig } from '../../../src/sources/pod-config.js';
import type { PodUpdate, SetDelta } from '../../../src/sources/types.js';
import { PodOperation } from '../../../src/constants.js';
import { stampNewPod } from '../../../src/sources/pod-diff.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';


function drain(config: PodConfig): PodUpdate[] {
  const out: PodUpdate[] = [];
  for (let u = config.updates.tryNext(); u !== undefined; u = config.updates.tryNext()) out.push(u);
  return out;
}

// The order of pods within one update is not specified (the kubelet's comes from map
// iteration), and a delta reorders the merger's per-source map: compare them sorted.
const view = (updates: PodUpdate[]): unknown => updates.map((u) => ({ op: u.op, pods: u.pods.map((p) => canonicalJSON(p)).sort() }));

// A pod from a small pool of UIDs and names, so that sets repeat, rename and collide.
const podArb = fc.record({
  uid: fc.constantFrom('u1', 'u2', 'u3', 'u4', 'u5', 'u6'),
  name: fc.constantFrom('a', 'b', 'c', 'd'),
  image: fc.constantFrom('one', 'two'),
  phase: fc.constantFrom(undefined, 'Pending', 'Running'),
  deleting: fc.boolean(),
});

const makePod = (p: { uid: string; name: string; image: string; phase: string | undefined; deleting: boolean }): Pod => ({
  metadata: { uid: p.uid, name: p.name, namespace: 'ns', ...(p.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' as never } : {}) },
  spec: { containers: [{ name: 'c', image: p.image }] },
  ...(p.phase ? { status: { phase: p.phase } } : {}),
});

/** One step: keep some pods of the previous set (same objects), drop others, add or replace some. */
const stepArb = fc.record({ keep: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }), add: fc.array(podArb, { maxLength: 3 }) });

test('a SET with a delta merges exactly like the same SET without one (property)', () => {
  fc.assert(
    fc.property(fc.array(podArb, { maxLength: 5 }), fc.array(stepArb, { minLength: 1, maxLength: 12 }), (initial, steps) => {
      const full = createPodConfig({ clock: new FakeClock() });
      const withDelta = createPodConfig({ clock: new FakeClock() });
      let prev = initial.map(makePod);
      full.channel('file')({ op: PodOperation.SET, source: 'file', pods: prev });
      withDelta.channel('file')({ op: PodOperation.SET, source: 'file', pods: prev });
      assert.deepEqual(view(drain(withDelta)), view(drain(full)));
      for (const step of steps) {
        const added = step.add.map(makePod);
        // A new object for a pod already in the set replaces it (one object per UID and step).
        const kept = prev.filter((p, i) => step.keep[i % 6] && !added.some((a) => a.metadata?.uid === p.metadata?.uid));
        const next = [...kept, ...added];
        const removed = prev.filter((p) => !next.some((q) => q.metadata?.uid === p.metadata?.uid));
        const delta: SetDelta = { base: prev, changed: added, removed };
        full.channel('file')({ op: PodOperation.SET, source: 'file', pods: next });
        withDelta.channel('file')({ op: PodOperation.SET, source: 'file', pods: next, delta });
        assert.deepEqual(view(drain(withDelta)), view(drain(full)));
        prev = next;
      }
    }),
    { numRuns: 300 },
  );
});

test('a SET with a delta does not read the pods it does not name; a stale base falls back to the full set', () => {
  const config = createPodConfig({ clock: new FakeClock() });
  const channel = config.channel('api');
  const pods = Array.from({ length: 50 }, (_, i) => makePod({ uid: `u${i}`, name: `p${i}`, image: 'one', phase: undefined, deleting: false }));
  channel({ op: PodOperation.SET, source: 'api', pods });
  assert.equal(drain(config)[0]?.pods.length, 50);

  // The unchanged pods of the next set throw when read: the delta must be enough.
  const untouchable = (pod: Pod): Pod =>
    new Proxy(pod, {
      get: () => {
        throw new Error(`unchanged pod ${pod.metadata?.uid} was read`);
      },
    });
  const changed = makePod({ uid: 'u3', name: 'p3', image: 'two', phase: undefined, deleting: false });
  const added = makePod({ uid: 'u99', name: 'p99', image: 'one', phase: undefined, deleting: false });
  const next = [...pods.slice(0, 3).map(untouchable), changed, ...pods.slice(5).map(untouchable), added];
  channel({ op: PodOperation.SET, source: 'api', pods: next, delta: { base: pods, changed: [changed, added], removed: [pods[4]!] } });
  const got = drain(config);
  assert.deepEqual(
    got.map((u) => [u.op, u.pods.map((p) => p.metadata?.uid)]),
    [
      [PodOperation.REMOVE, ['u4']],
      [PodOperation.ADD, ['u99']],
      [PodOperation.UPDATE, ['u3']],
    ],
  );

  // A delta whose base is not the last SET merged is ignored: the full set is read.
  const stale = [...pods];
  assert.throws(
    () => channel({ op: PodOperation.SET, source: 'api', pods: next, delta: { base: stale, changed: [], removed: [] } }),
    /was read/,
  );
});

test('a SET\'s names index holds no map by UID: the merger\'s own bytes per pod', async () => {
  const config = createPodConfig({ clock: new FakeClock() });
  const channel = config.channel('api');
  const pods: Pod[] = Array.from({ length: 60_000 }, (_, i) => ({
    metadata: { uid: `uid-${i}`, name: `p${i}`, namespace: 'ns' },
    spec: { containers: [{ name: 'c', image: 'img' }] },
  }));
  // What the merger keeps per pod, less its stamped copy (measured apart): the stored pods' map,
  // the names' map and their keys, about 98 bytes; with a names' map by UID beside, about 129.
  const stamped = await retainedBytesPer(pods.length, (i) => stampNewPod(pods[i]!, 'api', 'seen'));
  const merged = (await retainedBytesPer(1, () => channel({ op: PodOperation.SET, source: 'api', pods }))) / pods.length;
  assert.equal(drain(config).find((u) => u.op === PodOperation.ADD)?.pods.length, pods.length);
  assert.ok(merged - stamped < 114, `${(merged - stamped).toFixed(1)} bytes per pod beside the stamped copy`);
});
