// Counterpart of pkg/kubelet/pod/pod_manager_test.go (PM-1…PM-8, PM-10, PM-11, v1.30 and the
// pre-1.28 supplementary cases), plus the quirks of basicManager (the full-name entry removed
// whoever holds it, translations outliving their static pod, last writer wins a full name) and
// the v1.25 extras, for src/pod/manager.ts.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { hasErrorCode } from '../../../src/errors.js';
import { FakeMirrorClient } from '../../../src/mirror/fake-mirror-client.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { ConfigMapManager, SecretManager } from '../../../src/pod/object-managers.js';
import type { Pod } from '../../../src/pod/types.js';
import { assertSamePods, assertSameStrings, ephemeralGauge, newPod, ns } from './pod-fixtures.js';

/** Records every register/unregister call, in order, as `register:<uid>` / `unregister:<uid>`. */
class RecordingObjectManager implements SecretManager, ConfigMapManager {
  readonly calls: string[] = [];
  registerPod(pod: Pod): void {
    this.calls.push(`register:${pod.metadata?.uid}`);
  }
  unregisterPod(pod: Pod): void {
    this.calls.push(`unregister:${pod.metadata?.uid}`);
  }
}

function translationsAsObjects(pm: PodManager): { podToMirror: object; mirrorToPod: object } {
  const { podToMirror, mirrorToPod } = pm.getUIDTranslations();
  return { podToMirror: Object.fromEntries(podToMirror), mirrorToPod: Object.fromEntries(mirrorToPod) };
}

describe('PM-1 TestGetSetPods', () => {
  test('PM-1 TestGetSetPods', () => {
    const taco = newPod('999999999', 'taco', ns, 'extra');
    const staticPod = newPod('123456789', 'bar', ns, 'static');
    const mirror = newPod('987654321', 'bar', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([taco, staticPod, mirror]);
    assertSamePods(pm.getPods(), [taco, staticPod]);
    assert.equal(pm.translatePodUID('987654321'), '123456789');
    assert.equal(pm.getPodByFullName('bar_default'), staticPod);
    assert.equal(pm.getPodByName('default', 'bar'), staticPod);
  });
});

describe('PM-2 TestRemovePods', () => {
  test('PM-2 TestRemovePods', () => {
    const extra = newPod('extra-pod-uid', 'extra-pod-name', ns, 'extra');
    const staticPod = newPod('static-pod-uid', 'mirror-static-pod-name', ns, 'static');
    const mirror = newPod('mirror-pod-uid', 'mirror-static-pod-name', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([extra, staticPod, mirror]);
    pm.removePod(staticPod);
    assertSamePods(pm.getPods(), [extra]);
    assert.deepEqual(pm.getPodsAndMirrorPods().orphanedMirrorPodFullNames, ['mirror-static-pod-name_default']);
  });
});

// PM-3 and PM-4 share these fixtures; the mirror comes before its static pod.
function laterRevisionFixtures(): { mirrorPod: Pod; staticPod: Pod; normalPod: Pod; pm: PodManager } {
  const mirrorPod = newPod('mirror-pod-uid', 'mirror-static-pod-name', ns, 'mirror');
  const staticPod = newPod('static-pod-uid', 'mirror-static-pod-name', ns, 'static');
  const normalPod = newPod('normal-pod-uid', 'normal-pod-name', ns, 'plain');
  const pm = new PodManager();
  pm.setPods([mirrorPod, staticPod, normalPod]);
  return { mirrorPod, staticPod, normalPod, pm };
}

describe('PM-3 TestGetSetPods (table-driven revision)', () => {
  for (const which of ['normal', 'static'] as const) {
    test(`PM-3 TestGetSetPods/Get ${which} pod`, () => {
      const { staticPod, normalPod, pm } = laterRevisionFixtures();
      assertSamePods(pm.getPods(), [staticPod, normalPod]);
      assert.equal(pm.translatePodUID('mirror-pod-uid'), 'static-pod-uid');
      const expected = which === 'normal' ? normalPod : staticPod;
      const name = which === 'normal' ? 'normal-pod-name' : 'mirror-static-pod-name';
      assert.equal(pm.getPodByFullName(`${name}_default`), expected);
      assert.equal(pm.getPodByName('default', name), expected);
    });
  }
});

describe('PM-4 TestRemovePods (table-driven revision)', () => {
  const cases = [
    { desc: 'Remove mirror pod', remove: 'mirrorPod', pods: ['normalPod', 'staticPod'], mirrors: [] },
    { desc: 'Remove static pod', remove: 'staticPod', pods: ['normalPod'], mirrors: ['mirrorPod'] },
    { desc: 'Remove normal pod', remove: 'normalPod', pods: ['staticPod'], mirrors: ['mirrorPod'] },
  ] as const;
  for (const c of cases) {
    test(`PM-4 TestRemovePods/${c.desc}`, () => {
      const fixtures = laterRevisionFixtures();
      const { pm } = fixtures;
      pm.removePod(fixtures[c.remove]);
      const { pods, mirrorPods } = pm.getPodsAndMirrorPods();
      assertSamePods(pm.getPods(), pods);
      assertSamePods(pods, c.pods.map((k) => fixtures[k]));
      assert.ok(Array.isArray(mirrorPods), 'mirror pods must be a list, even when empty');
      assertSamePods(mirrorPods, c.mirrors.map((k) => fixtures[k]));
    });
  }
});

describe('PM-5 TestAddPod', () => {
  test('PM-5 TestAddPod', () => {
    const pm = new PodManager();
    const extra = newPod('extra-pod-uid', 'extra-pod-name', ns, 'extra');
    pm.addPod(extra);
    assertSamePods(pm.getPods(), [extra]);
  });
});

describe('PM-6 TestGetPodsAndMirrorPods', () => {
  test('PM-6 TestGetPodsAndMirrorPods', () => {
    const bar = newPod('123456789', 'bar', ns, 'extra');
    const taco = newPod('999999999', 'taco', ns, 'static');
    const mirror = newPod('987654321', 'bar', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([bar, taco, mirror]);
    const { pods, mirrorPods, orphanedMirrorPodFullNames } = pm.getPodsAndMirrorPods();
    assertSamePods(pods, [bar, taco]);
    assertSamePods(mirrorPods, [mirror]);
    assert.deepEqual(orphanedMirrorPodFullNames, []);
    // Pairing is by full name only: the mirror pairs with the non-static pod `bar`.
    assert.equal(pm.translatePodUID('987654321'), '123456789');
    assert.equal(pm.getPodByMirrorPod(mirror), bar);
  });
});

describe('PM-7 TestGetPodById', () => {
  const fixtures = () => {
    const pm = new PodManager();
    pm.setPods([
      newPod('999999999', 'taco', ns, 'static'),
      newPod('123456789', 'bar', ns, 'extra'),
      newPod('987654321', 'bar', ns, 'mirror'),
    ]);
    return pm;
  };
  test('PM-7 TestGetPodById/api pod', () => {
    assert.equal(fixtures().getPodByUID('123456789')?.metadata?.uid, '123456789');
  });
  test('PM-7 TestGetPodById/static pod', () => {
    assert.equal(fixtures().getPodByUID('999999999')?.metadata?.uid, '999999999');
  });
  test('PM-7 TestGetPodById/mirror pod is never found by UID', () => {
    assert.equal(fixtures().getPodByUID('987654321'), undefined);
  });
});

describe('PM-8 TestGetUIDTranslations', () => {
  const base = (): PodManager => {
    const pm = new PodManager();
    pm.addPod(newPod('resolved1', 'one', ns, 'static'));
    pm.addPod(newPod('resolved2', 'two', ns, 'static'));
    pm.addPod(newPod('mirror1', 'one', ns, 'mirror'));
    pm.addPod(newPod('mirror2', 'two', ns, 'mirror'));
    pm.addPod(newPod('api1', 'three', ns, 'extra'));
    return pm;
  };
  test('PM-8 TestGetUIDTranslations/all static pods have mirrors', () => {
    assert.deepEqual(translationsAsObjects(base()), {
      podToMirror: { resolved1: 'mirror1', resolved2: 'mirror2' },
      mirrorToPod: { mirror1: 'resolved1', mirror2: 'resolved2' },
    });
  });
  test('PM-8 TestGetUIDTranslations/a static pod has no mirror', () => {
    const pm = base();
    pm.addPod(newPod('resolved3', 'four', ns, 'static'));
    assert.deepEqual(translationsAsObjects(pm), {
      podToMirror: { resolved1: 'mirror1', resolved2: 'mirror2', resolved3: '' },
      mirrorToPod: { mirror1: 'resolved1', mirror2: 'resolved2' },
    });
  });
  test('PM-8 TestGetUIDTranslations/a paired non-static pod appears, an unpaired one does not', () => {
    const pm = base();
    pm.addPod(newPod('mirror3', 'three', ns, 'mirror'));
    const { podToMirror, mirrorToPod } = translationsAsObjects(pm);
    assert.deepEqual(podToMirror, { resolved1: 'mirror1', resolved2: 'mirror2', api1: 'mirror3' });
    assert.deepEqual(mirrorToPod, { mirror1: 'resolved1', mirror2: 'resolved2', mirror3: 'api1' });
  });
});

describe('PM-10 TestGetMirrorPodByPod', () => {
  test('PM-10 TestGetMirrorPodByPod/found', () => {
    const pm = new PodManager();
    const mirror = newPod('123456789', 'bar', ns, 'mirror');
    pm.addPod(mirror);
    assert.equal(pm.getMirrorPodByPod(newPod('987654321', 'bar', ns, 'static')), mirror);
  });
  test('PM-10 TestGetMirrorPodByPod/not found', () => {
    const pm = new PodManager();
    pm.addPod(newPod('123456789', 'baz', ns, 'mirror'));
    assert.equal(pm.getMirrorPodByPod(newPod('987654321', 'bar', ns, 'static')), undefined);
  });
});

describe('getMirrorPodByFullName', () => {
  test('finds a mirror by full name, with or without its static pod', () => {
    const pm = new PodManager();
    const mirror = newPod('m1', 'bar', ns, 'mirror');
    pm.addPod(mirror);
    assert.equal(pm.getMirrorPodByFullName('bar_default'), mirror, 'orphaned mirror');
    pm.addPod(newPod('s1', 'bar', ns, 'static'));
    assert.equal(pm.getMirrorPodByFullName('bar_default'), mirror, 'paired mirror');
  });
  test('never answers with a non-mirror pod of that name', () => {
    const pm = new PodManager();
    pm.addPod(newPod('s1', 'bar', ns, 'static'));
    pm.addPod(newPod('a1', 'baz', ns, 'extra'));
    assert.equal(pm.getMirrorPodByFullName('bar_default'), undefined);
    assert.equal(pm.getMirrorPodByFullName('baz_default'), undefined);
  });
  test('forgets the mirror once it is removed, and follows a replacement', () => {
    const pm = new PodManager();
    const first = newPod('m1', 'bar', ns, 'mirror');
    const second = newPod('m2', 'bar', ns, 'mirror');
    pm.addPod(first);
    pm.addPod(second);
    assert.equal(pm.getMirrorPodByFullName('bar_default'), second, 'the last mirror written wins the name');
    pm.removePod(second);
    assert.equal(pm.getMirrorPodByFullName('bar_default'), undefined);
  });
  test('takes the full name as given: names with underscores are not split', () => {
    const pm = new PodManager();
    const mirror = newPod('m1', 'a_b', 'c', 'mirror');
    pm.addPod(mirror);
    assert.equal(pm.getMirrorPodByFullName('a_b_c'), mirror);
    assert.equal(pm.getMirrorPodByFullName('a_b'), undefined);
  });
});

describe('PM-11 TestGetPodByMirrorPod', () => {
  test('PM-11 TestGetPodByMirrorPod/found', () => {
    const pm = new PodManager();
    const staticPod = newPod('123456789', 'bar', ns, 'static');
    pm.addPod(staticPod);
    assert.equal(pm.getPodByMirrorPod(newPod('987654321', 'bar', ns, 'mirror')), staticPod);
  });
  test('PM-11 TestGetPodByMirrorPod/not found', () => {
    const pm = new PodManager();
    pm.addPod(newPod('123456789', 'baz', ns, 'static'));
    assert.equal(pm.getPodByMirrorPod(newPod('987654321', 'bar', ns, 'mirror')), undefined);
  });
});

describe('pod manager quirks kept from basicManager', () => {
  for (const order of ['static first', 'mirror first'] as const) {
    test(`the translation is set whichever half of the pair arrives first: ${order}`, () => {
      const staticPod = newPod('s', 'bar', ns, 'static');
      const mirror = newPod('m', 'bar', ns, 'mirror');
      const pm = new PodManager();
      for (const pod of order === 'static first' ? [staticPod, mirror] : [mirror, staticPod]) pm.addPod(pod);
      assert.equal(pm.translatePodUID('m'), 's');
      assert.deepEqual(translationsAsObjects(pm), { podToMirror: { s: 'm' }, mirrorToPod: { m: 's' } });
    });
  }

  test('the translation outlives a removed static pod until its mirror is removed', () => {
    const staticPod = newPod('s', 'bar', ns, 'static');
    const mirror = newPod('m', 'bar', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([staticPod, mirror]);
    pm.removePod(staticPod);
    assert.equal(pm.getPodByUID('s'), undefined);
    assert.equal(pm.translatePodUID('m'), 's');
    assert.deepEqual(translationsAsObjects(pm), { podToMirror: { s: 'm' }, mirrorToPod: { m: 's' } });
    assert.deepEqual(pm.getOrphanedMirrorPodNames(), ['bar_default']);
    pm.removePod(mirror);
    assert.equal(pm.translatePodUID('m'), 'm');
    assert.deepEqual(translationsAsObjects(pm), { podToMirror: {}, mirrorToPod: {} });
  });

  test('removePod clears the full-name entry even when it holds a pod of another UID', () => {
    const first = newPod('uid-1', 'bar', ns, 'extra');
    const second = newPod('uid-2', 'bar', ns, 'extra');
    const pm = new PodManager();
    pm.setPods([first, second]);
    assert.equal(pm.getPodByFullName('bar_default'), second);
    pm.removePod(first);
    assert.equal(pm.getPodByFullName('bar_default'), undefined, 'the name went with the other UID');
    assert.equal(pm.getPodByUID('uid-2'), second, 'the UID index still has the second pod');
    assertSamePods(pm.getPods(), [second]);
  });

  test('removePod of a mirror clears the full-name entry even when another mirror UID owns it', () => {
    const staticPod = newPod('s', 'bar', ns, 'static');
    const oldMirror = newPod('m1', 'bar', ns, 'mirror');
    const newMirror = newPod('m2', 'bar', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([staticPod, oldMirror, newMirror]);
    pm.removePod(oldMirror);
    assert.equal(pm.getMirrorPodByPod(staticPod), undefined);
    assertSamePods(pm.getPodsAndMirrorPods().mirrorPods, [newMirror]);
    assert.equal(pm.translatePodUID('m1'), 'm1');
    assert.equal(pm.translatePodUID('m2'), 's');
  });

  test('pods with the same full name replace each other in the full-name index, last writer wins', () => {
    const first = newPod('uid-1', 'bar', ns, 'extra');
    const second = newPod('uid-2', 'bar', ns, 'static');
    const pm = new PodManager();
    pm.addPod(first);
    pm.addPod(second);
    assert.equal(pm.getPodByName(ns, 'bar'), second);
    pm.updatePod(first);
    assert.equal(pm.getPodByName(ns, 'bar'), first);
    assertSamePods(pm.getPods(), [first, second]);
  });

  test('a pod renamed under the same UID leaves its old full name pointing at the old object', () => {
    const before = newPod('uid-1', 'old', ns, 'extra');
    const after = newPod('uid-1', 'new', ns, 'extra');
    const pm = new PodManager();
    pm.addPod(before);
    pm.updatePod(after);
    assertSamePods(pm.getPods(), [after]);
    assert.equal(pm.getPodByFullName('new_default'), after);
    assert.equal(pm.getPodByFullName('old_default'), before);
  });

  test('getPodAndMirrorPod returns the pod passed in, not the stored object', () => {
    const staticPod = newPod('s', 'bar', ns, 'static');
    const mirror = newPod('m', 'bar', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([staticPod, mirror]);
    const staticCopy = structuredClone(staticPod);
    const mirrorCopy = structuredClone(mirror);
    const fromStatic = pm.getPodAndMirrorPod(staticCopy);
    assert.equal(fromStatic.pod, staticCopy);
    assert.equal(fromStatic.mirrorPod, mirror);
    assert.equal(fromStatic.wasMirror, false);
    const fromMirror = pm.getPodAndMirrorPod(mirrorCopy);
    assert.equal(fromMirror.pod, staticPod);
    assert.equal(fromMirror.mirrorPod, mirrorCopy);
    assert.equal(fromMirror.wasMirror, true);
    const unknown = newPod('x', 'nobody', ns, 'mirror');
    assert.deepEqual(pm.getPodAndMirrorPod(unknown), { pod: undefined, mirrorPod: unknown, wasMirror: true });
  });

  test("translatePodUID('') is '' and unknown UIDs come back unchanged", () => {
    const pm = new PodManager();
    pm.setPods([newPod('s', 'bar', ns, 'static'), newPod('m', 'bar', ns, 'mirror')]);
    assert.equal(pm.translatePodUID(''), '');
    assert.equal(pm.translatePodUID('s'), 's');
    assert.equal(pm.translatePodUID('unknown'), 'unknown');
  });

  test('setPods replaces everything, translations included', () => {
    const pm = new PodManager();
    pm.setPods([newPod('s', 'bar', ns, 'static'), newPod('m', 'bar', ns, 'mirror')]);
    const other = newPod('o', 'other', ns, 'extra');
    pm.setPods([other]);
    assertSamePods(pm.getPods(), [other]);
    assert.equal(pm.translatePodUID('m'), 'm');
    assert.deepEqual(pm.getPodsAndMirrorPods().mirrorPods, []);
    assert.equal(pm.getPodByFullName('bar_default'), undefined);
  });
});

describe('list snapshots', () => {
  test('getPods() returns the same frozen array until a change, and a new one after', () => {
    const pm = new PodManager();
    const a = newPod('a', 'a', ns, 'extra');
    pm.addPod(a);
    const first = pm.getPods();
    assert.ok(Object.isFrozen(first));
    assert.equal(pm.getPods(), first);
    assert.equal(pm.getPodsAndMirrorPods().pods, first);
    const b = newPod('b', 'b', ns, 'extra');
    pm.addPod(b);
    const second = pm.getPods();
    assert.notEqual(second, first);
    assertSamePods(first, [a], 'the old snapshot is unchanged');
    assertSamePods(second, [a, b]);
    pm.removePod(a);
    assert.notEqual(pm.getPods(), second);
    assertSamePods(pm.getPods(), [b]);
  });

  test('getPodsAndMirrorPods() is a frozen snapshot shared until a change', () => {
    const pm = new PodManager();
    pm.setPods([newPod('m', 'bar', ns, 'mirror')]);
    const first = pm.getPodsAndMirrorPods();
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.mirrorPods) && Object.isFrozen(first.orphanedMirrorPodFullNames));
    assert.equal(pm.getPodsAndMirrorPods(), first);
    assert.deepEqual(first.orphanedMirrorPodFullNames, ['bar_default']);
    pm.addPod(newPod('s', 'bar', ns, 'static'));
    const second = pm.getPodsAndMirrorPods();
    assert.notEqual(second, first);
    assert.deepEqual(second.orphanedMirrorPodFullNames, []);
  });
});

describe('v1.25 extras', () => {
  test('deletePod is removePod', () => {
    const staticPod = newPod('s', 'bar', ns, 'static');
    const mirror = newPod('m', 'bar', ns, 'mirror');
    const pm = new PodManager();
    pm.setPods([staticPod, mirror]);
    pm.deletePod(mirror);
    assert.deepEqual(pm.getPodsAndMirrorPods().mirrorPods, []);
    assert.equal(pm.translatePodUID('m'), 'm');
    pm.deletePod(staticPod);
    assert.deepEqual(pm.getPods(), []);
  });

  test('getOrphanedMirrorPodNames lists mirrors without a non-mirror pod of their full name', () => {
    const pm = new PodManager();
    pm.setPods([
      newPod('s', 'paired', ns, 'static'),
      newPod('m1', 'paired', ns, 'mirror'),
      newPod('m2', 'orphan', ns, 'mirror'),
      newPod('m3', 'orphan', 'kube-system', 'mirror'),
    ]);
    assertSameStrings(pm.getOrphanedMirrorPodNames(), ['orphan_default', 'orphan_kube-system']);
    const copy = pm.getOrphanedMirrorPodNames();
    copy.push('mutated');
    assert.equal(pm.getOrphanedMirrorPodNames().length, 2, 'callers get their own copy');
  });

  test('isMirrorPodOf method agrees with the package function', () => {
    const pm = new PodManager();
    const pod = newPod('s', 'bar', ns, 'static', { hash: 'h' });
    assert.equal(pm.isMirrorPodOf(newPod('m', 'bar', ns, 'mirror', { mirrorValue: 'h' }), pod), true);
    assert.equal(pm.isMirrorPodOf(newPod('m', 'bar', ns, 'mirror', { mirrorValue: 'other' }), pod), false);
  });

  test('secret and configmap managers: register on add/update, unregister when terminated or removed', () => {
    const secrets = new RecordingObjectManager();
    const configMaps = new RecordingObjectManager();
    const pm = new PodManager({ secretManager: secrets, configMapManager: configMaps });
    pm.addPod(newPod('a', 'a', ns, 'extra'));
    pm.updatePod(newPod('a', 'a', ns, 'extra', { phase: 'Running' }));
    pm.updatePod(newPod('a', 'a', ns, 'extra', { phase: 'Succeeded' }));
    pm.updatePod(newPod('b', 'b', ns, 'extra', { phase: 'Failed' }));
    pm.addPod(newPod('m', 'bar', ns, 'mirror'));
    pm.removePod(newPod('c', 'c', ns, 'extra'));
    pm.setPods([newPod('d', 'd', ns, 'static')]);
    const expected = [
      'register:a',
      'register:a',
      'unregister:a',
      'unregister:b',
      'register:m',
      'unregister:c',
      'register:d',
    ];
    assert.deepEqual(secrets.calls, expected);
    assert.deepEqual(configMaps.calls, expected);
  });

  test('createMirrorPod and deleteMirrorPod delegate to the mirror client', async () => {
    const client = new FakeMirrorClient();
    const pm = new PodManager({ mirrorClient: client });
    await pm.createMirrorPod(newPod('s', 'bar', ns, 'static'));
    assert.equal(client.hasPod('bar_default'), true);
    assert.equal(await pm.deleteMirrorPod('bar_default', 'm'), true);
    assert.equal(client.hasPod('bar_default'), false);
    assert.deepEqual(client.calls, [
      { op: 'create', podFullName: 'bar_default' },
      { op: 'delete', podFullName: 'bar_default', uid: 'm' },
    ]);
    await assert.rejects(pm.deleteMirrorPod('not-a-full-name'), (err: unknown) => hasErrorCode(err, 'KP_ERR_POD_FULL_NAME'));
  });

  test('createMirrorPod and deleteMirrorPod reject with KP_ERR_NO_MIRROR_CLIENT without a client', async () => {
    const pm = new PodManager();
    await assert.rejects(pm.createMirrorPod(newPod('s', 'bar', ns, 'static')), (err: unknown) =>
      hasErrorCode(err, 'KP_ERR_NO_MIRROR_CLIENT'),
    );
    await assert.rejects(pm.deleteMirrorPod('bar_default'), (err: unknown) =>
      hasErrorCode(err, 'KP_ERR_NO_MIRROR_CLIENT'),
    );
  });
});

describe('kubelet_managed_ephemeral_containers', () => {
  const setup = () => {
    const registry = new Registry();
    return { registry, pm: new PodManager({ registry }) };
  };

  test('counts ephemeral containers of added and updated non-mirror pods', async () => {
    const { registry, pm } = setup();
    assert.equal(await ephemeralGauge(registry), 0);
    pm.addPod(newPod('a', 'a', ns, 'extra', { ephemeral: 2 }));
    pm.addPod(newPod('s', 's', ns, 'static', { ephemeral: 1 }));
    assert.equal(await ephemeralGauge(registry), 3);
    pm.updatePod(newPod('a', 'a', ns, 'extra', { ephemeral: 3 }));
    assert.equal(await ephemeralGauge(registry), 4);
    pm.removePod(newPod('s', 's', ns, 'static', { ephemeral: 1 }));
    assert.equal(await ephemeralGauge(registry), 3);
    const text = await registry.getSingleMetricAsString('kubelet_managed_ephemeral_containers');
    assert.match(text, /^kubelet_managed_ephemeral_containers 3$/m);
  });

  test('mirror pods never count', async () => {
    const { registry, pm } = setup();
    pm.addPod(newPod('m', 'bar', ns, 'mirror', { ephemeral: 5 }));
    assert.equal(await ephemeralGauge(registry), 0);
    pm.removePod(newPod('m', 'bar', ns, 'mirror', { ephemeral: 5 }));
    assert.equal(await ephemeralGauge(registry), 0);
  });

  test('removing a pod that was never added changes nothing (the kubelet drifts below zero)', async () => {
    const { registry, pm } = setup();
    pm.addPod(newPod('a', 'a', ns, 'extra', { ephemeral: 1 }));
    pm.removePod(newPod('ghost', 'ghost', ns, 'extra', { ephemeral: 4 }));
    assert.equal(await ephemeralGauge(registry), 1);
  });

  test('removing a pod counts the stored version, not the argument', async () => {
    const { registry, pm } = setup();
    pm.addPod(newPod('a', 'a', ns, 'extra', { ephemeral: 2 }));
    pm.removePod(newPod('a', 'a', ns, 'extra', { ephemeral: 7 }));
    assert.equal(await ephemeralGauge(registry), 0);
  });

  test('removing a mirror pod whose UID a non-mirror pod also uses does not count', async () => {
    const { registry, pm } = setup();
    pm.addPod(newPod('same', 'bar', ns, 'static', { ephemeral: 2 }));
    pm.removePod(newPod('same', 'bar', ns, 'mirror', { ephemeral: 2 }));
    assert.equal(await ephemeralGauge(registry), 2);
    assert.equal(pm.getPodByUID('same')?.metadata?.uid, 'same');
  });

  test('replacing a pod and setPods keep the gauge exact', async () => {
    const { registry, pm } = setup();
    pm.addPod(newPod('a', 'a', ns, 'extra', { ephemeral: 2 }));
    pm.addPod(newPod('a', 'renamed', ns, 'extra', { ephemeral: 1 }));
    assert.equal(await ephemeralGauge(registry), 1);
    pm.setPods([newPod('b', 'b', ns, 'extra', { ephemeral: 3 }), newPod('m', 'm', ns, 'mirror', { ephemeral: 9 })]);
    assert.equal(await ephemeralGauge(registry), 3);
    pm.setPods([]);
    assert.equal(await ephemeralGauge(registry), 0);
  });

  test('registering a second manager on the same registry fails with KP_ERR_METRIC_REGISTERED', () => {
    const { registry } = setup();
    assert.throws(
      () => new PodManager({ registry }),
      (err: unknown) => hasErrorCode(err, 'KP_ERR_METRIC_REGISTERED'),
    );
  });
});
