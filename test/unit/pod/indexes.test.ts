// The indexes under the pod manager, each keeping removed keys in place until it sweeps them:
// TombstoneMap, the mirror UID table (a Map, or with many UIDs a TombstoneMap with a bitmap),
// the pods-by-UID slots (which keep a removed pod's full name), the full-name indexes of pods
// and of mirrors, and the lazily caught-up namespace → name index.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { internalizedKey } from '../../../src/pod/dictionary.js';
import { MirrorUIDTable } from '../../../src/pod/mirror-uid-table.js';
import { NamespacedNameIndex } from '../../../src/pod/namespaced-name-index.js';
import { PodsByFullName } from '../../../src/pod/pods-by-full-name.js';
import { PodsByUID, fullNameOf } from '../../../src/pod/pods-by-uid.js';
import { TombstoneMap } from '../../../src/pod/tombstone-map.js';
import { newPod, ns } from './pod-fixtures.js';
import type { MirrorPodUID, ResolvedPodUID } from '../../../src/pod/types.js';

function entries<K extends string, V extends {}>(map: TombstoneMap<K, V>): Array<[K, V]> {
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

  test('setting the value a key already holds reports no new key and changes nothing', () => {
    const map = new TombstoneMap<string, { v: number }>();
    const value = { v: 1 };
    assert.equal(map.set('a', value), true);
    assert.equal(map.set('a', value), false);
    assert.equal(map.size, 1);
    assert.equal(map.get('a'), value);
    map.delete('a');
    assert.equal(map.set('a', value), true, 'a hole holding nothing is refilled');
    assert.deepEqual(entries(map), [['a', value]]);
  });
});

describe('MirrorUIDTable', () => {
  const m = (uid: string): MirrorPodUID => uid as MirrorPodUID;
  const r = (uid: string): ResolvedPodUID => uid as ResolvedPodUID;

  // 300 keys stay a Map; 1,500 cross MIN_UIDS_FOR_BITMAP (1,024) into the bitmap's form, and
  // the deletes take them back below it.
  for (const many of [300, 1_500]) {
    test(`answers like a Map through growth, deletes, reloads and rebuilds, for UIDs of any shape (${many} UUIDs)`, () => {
      const table = new MirrorUIDTable();
      const reference = new Map<string, string>();
      // UUIDs, short and empty UIDs, UIDs that share their last characters, non-ASCII.
      const keys = [
        ...Array.from({ length: many }, () => randomUUID()),
        '',
        'a',
        'ab',
        'abc',
        ...Array.from({ length: 50 }, (_, i) => `${i}-same-tail`),
        'ünïcødé-ÿ',
        '12345',
      ];
      const check = (what: string): void => {
        assert.equal(table.size, reference.size, `${what}: size`);
        for (const key of [...keys, 'never', 'xyz', randomUUID()]) {
          assert.equal(table.get(m(key)), reference.get(key), `${what}: get ${JSON.stringify(key)}`);
          assert.equal(table.has(m(key)), reference.has(key), `${what}: has ${JSON.stringify(key)}`);
        }
        const seen = new Map<string, string>();
        table.forEach((podUID, mirrorUID) => seen.set(mirrorUID, podUID));
        assert.deepEqual(seen, reference, `${what}: forEach`);
      };
      const fill = (value: (i: number) => string): void =>
        keys.forEach((key, i) => {
          assert.equal(table.set(m(key), r(value(i))), !reference.has(key), `set ${JSON.stringify(key)}`);
          reference.set(key, value(i));
        });
      check('empty');
      fill((i) => `pod-${i}`);
      check('filled');
      assert.equal(table.set(m(keys[0]!), r('pod-0')), false, 'the value it holds already');
      keys.forEach((key, i) => {
        if (i % 3 !== 0) return;
        assert.equal(table.delete(m(key)), true);
        reference.delete(key);
      });
      assert.equal(table.delete(m(keys[0]!)), false, 'deleted already');
      check('after deletes');
      // More removals than live UIDs: the bitmap is rebuilt from the live ones, or dropped.
      keys.forEach((key, i) => {
        if (i % 3 === 1) {
          table.delete(m(key));
          reference.delete(key);
        }
      });
      check('after the rebuild');
      for (const reloadFrom of ['what is left', 'every key']) {
        if (reloadFrom === 'every key') fill((i) => `full-${i}`);
        table.holeAll();
        reference.clear();
        keys.forEach((key, i) => {
          if (i % 2 === 0) {
            table.set(m(key), r(`again-${i}`));
            reference.set(key, `again-${i}`);
          }
        });
        table.settle();
        check(`after a reload of ${reloadFrom}`);
      }
      table.clear();
      reference.clear();
      check('cleared');
      table.set(m('x'), r('y'));
      reference.set('x', 'y');
      check('set after clear');
    });
  }

  test('a table of few UIDs has no bitmap; past 1,024 the bitmap turns away most UIDs that are not mirror UIDs', () => {
    for (const mirrors of [10, 1_023, 1_024, 2_000, 10_000]) {
      const table = new MirrorUIDTable();
      for (let i = 0; i < mirrors; i++) table.set(m(randomUUID()), r(randomUUID()));
      let passed = 0;
      const probes = 20_000;
      for (let i = 0; i < probes; i++) if (table.mayHold(m(randomUUID()))) passed++;
      if (mirrors < 1_024) {
        assert.equal(passed, probes, `${mirrors} mirrors: no bitmap, every UID goes on to the Map`);
        continue;
      }
      // Sixteen bits per mirror UID: about one in sixteen others passes by chance. At 10,000
      // mirrors the four hex digits (65,536 values) are the limit: about one in six passes.
      assert.ok(passed / probes < (mirrors < 10_000 ? 0.1 : 0.25), `${mirrors} mirrors: ${passed} of ${probes} passed`);
    }
  });
});

describe('internalizedKey', () => {
  test('returns a string equal to its argument, array-index-like and empty keys included', () => {
    for (const key of ['api-12345_ns-5', `${'a'.repeat(20)}_${'b'.repeat(20)}`, '123', '0', '', '__proto__', 'a_b_c']) {
      assert.equal(internalizedKey(key), key);
    }
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

describe('PodsByFullName', () => {
  test('holds a pod and a mirror per name independently, and hands each its partner', () => {
    const names = new PodsByFullName();
    const pod = newPod('s1', 'web', ns, 'static');
    const mirror = newPod('m1', 'web', ns, 'mirror');
    assert.equal(names.setMirror('web_default', mirror), undefined);
    assert.equal(names.setPod('web_default', pod), mirror);
    assert.equal(names.setMirror('web_default', mirror), pod);
    assert.equal(names.podCount, 1);
    assert.deepEqual(names.orphanedMirrorFullNames(), []);
    names.deletePod('web_default');
    assert.equal(names.getPod('web_default'), undefined);
    assert.equal(names.getMirror('web_default'), mirror);
    assert.deepEqual(names.orphanedMirrorFullNames(), ['web_default']);
    names.deleteMirror('web_default');
    names.deleteMirror('web_default');
    names.deletePod('never');
    assert.equal(names.getMirror('web_default'), undefined);
    assert.equal(names.podCount, 0);
    assert.deepEqual(names.orphanedMirrorFullNames(), []);
  });

  test('answers right after many names were emptied and swept', () => {
    const names = new PodsByFullName();
    const pods = Array.from({ length: 100 }, (_, i) => newPod(`u${i}`, `p${i}`, ns, 'extra'));
    for (const pod of pods) names.setPod(`${pod.metadata!.name}_default`, pod);
    names.setMirror('p99_default', newPod('m99', 'p99', ns, 'mirror'));
    for (const pod of pods.slice(0, 90)) names.deletePod(`${pod.metadata!.name}_default`);
    names.setPod('p3_default', pods[3]!);
    assert.equal(names.podCount, 11);
    const seen: string[] = [];
    names.forEachPod((_pod, fullName) => seen.push(fullName));
    assert.deepEqual(seen.sort(), ['p3_default', ...pods.slice(90).map((p) => `${p.metadata!.name}_default`)].sort());
    assert.equal(names.getPod('p3_default'), pods[3]);
    assert.equal(names.getPod('p4_default'), undefined);
    assert.ok(names.getMirror('p99_default'));
  });
});

describe('PodsByFullName mirrors by namespace and name', () => {
  test('built on the first lookup, then kept up to date; names that split two ways stay out', () => {
    const names = new PodsByFullName();
    const web = newPod('m1', 'web', ns, 'mirror');
    names.setMirror('web_default', web);
    names.setMirror('a_b_default', newPod('m2', 'a_b', ns, 'mirror'));
    assert.equal(names.getMirrorByName(ns, 'web'), web, 'a mirror set before the first lookup');
    assert.equal(names.getMirrorByName(ns, 'a_b'), undefined, 'an ambiguous name is left to the full-name index');
    const db = newPod('m3', 'db', 'kube-system', 'mirror');
    names.setMirror('db_kube-system', db);
    assert.equal(names.getMirrorByName('kube-system', 'db'), db, 'a mirror set after it');
    names.deleteMirror('web_default');
    assert.equal(names.getMirrorByName(ns, 'web'), undefined, 'a removed mirror');
    names.holeAll();
    assert.equal(names.getMirrorByName('kube-system', 'db'), undefined, 'a reload forgets every mirror');
    names.setMirror('db_kube-system', db);
    names.settle();
    assert.equal(names.getMirrorByName('kube-system', 'db'), db, 'and finds the ones set again');
  });
});

describe('PodsByFullName mirror names that split more than one way', () => {
  test('are counted while held, once per name, and forgotten by a reload', () => {
    const names = new PodsByFullName();
    names.setMirror('web_default', newPod('m1', 'web', ns, 'mirror'));
    assert.equal(names.hasAmbiguousMirrorNames, false);
    names.setPod('p_q_default', newPod('u1', 'p_q', ns, 'extra'));
    assert.equal(names.hasAmbiguousMirrorNames, false, 'pods are not counted');
    names.setMirror('a_b_default', newPod('m2', 'a_b', ns, 'mirror'));
    names.setMirror('a_b_default', newPod('m3', 'a', 'b_default', 'mirror'));
    assert.equal(names.hasAmbiguousMirrorNames, true, 'a name with two `_`');
    names.deleteMirror('a_b_default');
    assert.equal(names.hasAmbiguousMirrorNames, false, 'counted once although set twice');
    names.setMirror('x_y_default', newPod('m4', 'x_y', ns, 'mirror'));
    names.holeAll();
    assert.equal(names.hasAmbiguousMirrorNames, false);
  });
});

describe('NamespacedNameIndex', () => {
  test('catches up with logged changes when read, and rebuilds after dropping a long log', () => {
    const names = new PodsByFullName();
    const index = new NamespacedNameIndex(names);
    const a = newPod('a', 'a', ns, 'extra');
    names.setPod('a_default', a);
    index.indexed(a);
    assert.equal(index.get(ns, 'a'), a, 'built on first read');
    const b = newPod('b', 'b', ns, 'extra');
    names.setPod('b_default', b);
    index.indexed(b);
    names.deletePod('a_default');
    index.unindexed(a);
    assert.equal(index.get(ns, 'a'), undefined, 'the logged removal applied');
    assert.equal(index.get(ns, 'b'), b, 'the logged addition applied');
    // More changes than pods and than the floor: the log is dropped, the next read rebuilds.
    for (let i = 0; i < 3000; i++) {
      const pod = newPod(`c${i}`, `c${i}`, 'other', 'extra');
      names.setPod(`c${i}_other`, pod);
      index.indexed(pod);
      if (i % 2 === 0) {
        names.deletePod(`c${i}_other`);
        index.unindexed(pod);
      }
    }
    assert.equal(index.get('other', 'c1')?.metadata?.uid, 'c1');
    assert.equal(index.get('other', 'c2'), undefined);
    assert.equal(index.get(ns, 'b'), b);
  });
});
