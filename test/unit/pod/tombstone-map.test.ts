// The indexes under the pod manager: a Map that keeps removed keys as holes until it sweeps
// them, and the pods-by-UID slots that keep a removed pod's full name.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PodsByUID, fullNameOf } from '../../../src/pod/pods-by-uid.js';
import { TombstoneMap } from '../../../src/pod/tombstone-map.js';
import { newPod, ns } from './pod-fixtures.js';

function entries<K, V extends {}>(map: TombstoneMap<K, V>): Array<[K, V]> {
  const out: Array<[K, V]> = [];
  map.forEach((value, key) => out.push([key, value]));
  return out;
}

describe('TombstoneMap', () => {
  test('answers like a Map through deletes, refills and sweeps', () => {
    const map = new TombstoneMap<string, number>();
    const reference = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      map.set(`k${i}`, i);
      reference.set(`k${i}`, i);
    }
    // 150 removals: more holes than live keys, so at least one sweep runs.
    for (let i = 0; i < 150; i++) {
      assert.equal(map.delete(`k${i}`), true);
      reference.delete(`k${i}`);
    }
    assert.equal(map.delete('k0'), false, 'a removed key is not there any more');
    assert.equal(map.delete('never'), false);
    for (let i = 0; i < 200; i += 3) {
      map.set(`k${i}`, -i);
      reference.set(`k${i}`, -i);
    }
    assert.equal(map.size, reference.size);
    for (let i = 0; i < 210; i++) {
      assert.equal(map.get(`k${i}`), reference.get(`k${i}`), `get k${i}`);
      assert.equal(map.has(`k${i}`), reference.has(`k${i}`), `has k${i}`);
    }
    assert.deepEqual(new Map(entries(map)), reference, 'forEach visits live entries only');
  });

  test('a key removed and set again is live again, and counted once', () => {
    const map = new TombstoneMap<string, string>();
    map.set('a', 'x');
    map.delete('a');
    assert.equal(map.size, 0);
    assert.equal(map.get('a'), undefined);
    map.set('a', 'y');
    map.set('a', 'z');
    assert.equal(map.size, 1);
    assert.deepEqual(entries(map), [['a', 'z']]);
    map.clear();
    assert.equal(map.size, 0);
    assert.deepEqual(entries(map), []);
  });
});

describe('PodsByUID', () => {
  test('keeps a removed pod out of every answer, and its full name for when it comes back', () => {
    const byUID = new PodsByUID<string>();
    const pod = newPod('u1', 'web', ns, 'extra');
    assert.equal(byUID.store('u1', pod), 'web_default');
    const slot = byUID.slot('u1')!;
    byUID.remove(slot);
    assert.equal(byUID.get('u1'), undefined);
    assert.equal(byUID.size, 0);
    assert.deepEqual(byUID.pods(), []);
    assert.equal(fullNameOf(pod, byUID.slot('u1')), 'web_default');
    assert.equal(byUID.store('u1', pod), 'web_default');
    assert.equal(byUID.get('u1'), pod);
    assert.equal(byUID.size, 1);
  });

  test('follows a pod that changes its name under the same UID', () => {
    const byUID = new PodsByUID<string>();
    byUID.store('u1', newPod('u1', 'web', ns, 'extra'));
    const renamed = newPod('u1', 'api', 'kube-system', 'extra');
    assert.equal(byUID.store('u1', renamed), 'api_kube-system');
    assert.equal(fullNameOf(renamed, byUID.slot('u1')), 'api_kube-system');
    assert.equal(fullNameOf(newPod('u1', 'web', ns, 'extra'), byUID.slot('u1')), 'web_default', 'another object is not given the slot\'s name');
  });

  test('sweeps empty slots without losing live pods', () => {
    const byUID = new PodsByUID<string>();
    const pods = Array.from({ length: 100 }, (_, i) => newPod(`u${i}`, `p${i}`, ns, 'extra'));
    for (const pod of pods) byUID.store(pod.metadata!.uid!, pod);
    for (const pod of pods.slice(0, 80)) byUID.remove(byUID.slot(pod.metadata!.uid!)!);
    assert.equal(byUID.size, 20);
    assert.deepEqual(new Set(byUID.pods()), new Set(pods.slice(80)));
    const seen: string[] = [];
    byUID.forEach((_pod, uid) => seen.push(uid));
    assert.deepEqual(seen.sort(), pods.slice(80).map((p) => p.metadata!.uid!).sort());
    for (const pod of pods.slice(0, 10)) byUID.store(pod.metadata!.uid!, pod);
    assert.equal(byUID.size, 30);
    assert.equal(byUID.get('u5'), pods[5]);
    assert.equal(byUID.get('u50'), undefined);
  });
});
