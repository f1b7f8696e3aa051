// Property-based check of src/pod/manager.ts against a deliberately naive reference model of the
// kubelet's basicManager (pkg/kubelet/pod/pod_manager.go): one plain map per index of
// basicManager, updated exactly as its AddPod/UpdatePod/RemovePod/SetPods do.
// Random call sequences over a tiny universe of names, namespaces and UIDs make full-name and
// UID collisions (same UID under another name, a mirror and a pod sharing a UID, two mirrors of
// one full name) frequent; after every call every query is compared with the model.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import { ephemeralGauge, newPod, type PodKind } from './pod-fixtures.js';

// 'a_b' in 'default' and 'a' in 'b_default' share the full name 'a_b_default' (Go's flat
// index conflates them too), and empty parts give names like 'a_': the manager must answer
// exactly as a flat `name_namespace` index would, whichever index it uses internally.
const NAMES = ['a', 'b', 'c', 'a_b', ''] as const;
const NAMESPACES = ['default', 'kube-system', 'b_default', ''] as const;
// '' is in the universe on purpose: translatePodUID('') must stay '' even if a mirror has UID ''.
const UIDS = ['u1', 'u2', 'u3', 'u4', 'u5', ''] as const;
const KINDS: readonly PodKind[] = ['static', 'mirror', 'extra', 'plain'];

const MIRROR_KEY = 'kubernetes.io/config.mirror';
const SOURCE_KEY = 'kubernetes.io/config.source';

// ---- the reference model: plain maps, one per index of basicManager ------------------------

const fullNameOf = (pod: Pod): string => `${pod.metadata?.name ?? ''}_${pod.metadata?.namespace ?? ''}`;
const uidOf = (pod: Pod): string => pod.metadata?.uid ?? '';
const modelIsMirror = (pod: Pod): boolean => MIRROR_KEY in (pod.metadata?.annotations ?? {});
const modelIsStatic = (pod: Pod): boolean => {
  const annotations = pod.metadata?.annotations ?? {};
  return SOURCE_KEY in annotations && annotations[SOURCE_KEY] !== 'api';
};

class ModelManager {
  podByUID = new Map<string, Pod>();
  podByFullName = new Map<string, Pod>();
  mirrorPodByUID = new Map<string, Pod>();
  mirrorPodByFullName = new Map<string, Pod>();
  translationByUID = new Map<string, string>();

  setPods(pods: readonly Pod[]): void {
    this.podByUID = new Map();
    this.podByFullName = new Map();
    this.mirrorPodByUID = new Map();
    this.mirrorPodByFullName = new Map();
    this.translationByUID = new Map();
    for (const pod of pods) this.upsert(pod);
  }

  upsert(pod: Pod): void {
    const fullName = fullNameOf(pod);
    if (modelIsMirror(pod)) {
      this.mirrorPodByUID.set(uidOf(pod), pod);
      this.mirrorPodByFullName.set(fullName, pod);
      const p = this.podByFullName.get(fullName);
      if (p) this.translationByUID.set(uidOf(pod), uidOf(p));
    } else {
      this.podByUID.set(uidOf(pod), pod);
      this.podByFullName.set(fullName, pod);
      const m = this.mirrorPodByFullName.get(fullName);
      if (m) this.translationByUID.set(uidOf(m), uidOf(pod));
    }
  }

  remove(pod: Pod): void {
    const fullName = fullNameOf(pod);
    if (modelIsMirror(pod)) {
      this.mirrorPodByUID.delete(uidOf(pod));
      this.mirrorPodByFullName.delete(fullName);
      this.translationByUID.delete(uidOf(pod));
    } else {
      this.podByUID.delete(uidOf(pod));
      this.podByFullName.delete(fullName);
    }
  }

  translate(uid: string): string {
    if (uid === '') return '';
    return this.translationByUID.get(uid) ?? uid;
  }

  /** mirrorToPod exactly; podToMirror as the set of acceptable values per static UID. */
  translations(): { mirrorToPod: Map<string, string>; podToMirror: Map<string, Set<string>> } {
    const podToMirror = new Map<string, Set<string>>();
    for (const [uid, pod] of this.podByUID) if (modelIsStatic(pod)) podToMirror.set(uid, new Set(['']));
    const written = new Set<string>();
    for (const [mirrorUID, podUID] of this.translationByUID) {
      // Go map order decides which of several mirror UIDs of one pod wins: accept any of them.
      if (!written.has(podUID)) podToMirror.set(podUID, new Set());
      written.add(podUID);
      podToMirror.get(podUID)!.add(mirrorUID);
    }
    return { mirrorToPod: new Map(this.translationByUID), podToMirror };
  }

  ephemeralContainers(): number {
    let total = 0;
    for (const pod of this.podByUID.values()) total += pod.spec?.ephemeralContainers?.length ?? 0;
    return total;
  }
}

// ---- random calls ---------------------------------------------------------------------------

const podArb: fc.Arbitrary<Pod> = fc
  .record({
    uid: fc.constantFrom(...UIDS),
    name: fc.constantFrom(...NAMES),
    namespace: fc.constantFrom(...NAMESPACES),
    kind: fc.constantFrom(...KINDS),
    ephemeral: fc.nat({ max: 2 }),
  })
  .map(({ uid, name, namespace, kind, ephemeral }) => newPod(uid, name, namespace, kind, { ephemeral }));

type Call =
  | { op: 'setPods'; pods: Pod[] }
  | { op: 'addPod' | 'updatePod' | 'removePod' | 'deletePod'; pod: Pod };

const callArb: fc.Arbitrary<Call> = fc.oneof(
  { weight: 1, arbitrary: fc.array(podArb, { maxLength: 6 }).map((pods): Call => ({ op: 'setPods', pods })) },
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.constantFrom('addPod', 'updatePod', 'removePod', 'deletePod') , podArb)
      .map(([op, pod]): Call => ({ op, pod })),
  },
);

function describeCall(call: Call): string {
  const show = (p: Pod) => {
    const kind = modelIsMirror(p) ? 'mirror' : modelIsStatic(p) ? 'static' : 'pod';
    return `${kind}(${JSON.stringify(uidOf(p))} ${fullNameOf(p)} eph=${p.spec?.ephemeralContainers?.length ?? 0})`;
  };
  return call.op === 'setPods' ? `setPods([${call.pods.map(show).join(', ')}])` : `${call.op}(${show(call.pod)})`;
}

// Probes for the methods that take a pod: one mirror and one non-mirror per full name.
const PROBES: Pod[] = NAMES.flatMap((name) =>
  NAMESPACES.flatMap((namespace) => [
    newPod('probe-mirror', name, namespace, 'mirror'),
    newPod('probe-pod', name, namespace, 'static'),
  ]),
);

const asSet = <T>(items: Iterable<T>): Set<T> => new Set(items);

/** The names, UIDs and probe pods a comparison asks about. */
interface Universe {
  names: readonly string[];
  namespaces: readonly string[];
  uids: readonly string[];
  probes: readonly Pod[];
}

const SMALL: Universe = { names: NAMES, namespaces: NAMESPACES, uids: UIDS, probes: PROBES };

async function compare(pm: PodManager, model: ModelManager, registry: Registry, where: string, universe: Universe = SMALL): Promise<void> {
  for (const name of universe.names) {
    for (const namespace of universe.namespaces) {
      const fullName = `${name}_${namespace}`;
      assert.equal(pm.getPodByFullName(fullName), model.podByFullName.get(fullName), `${where}: getPodByFullName(${fullName})`);
      assert.equal(pm.getPodByName(namespace, name), model.podByFullName.get(fullName), `${where}: getPodByName(${fullName})`);
      assert.equal(pm.getMirrorPodByFullName(fullName), model.mirrorPodByFullName.get(fullName), `${where}: getMirrorPodByFullName(${fullName})`);
    }
  }
  for (const uid of universe.uids) {
    assert.equal(pm.getPodByUID(uid), model.podByUID.get(uid), `${where}: getPodByUID(${JSON.stringify(uid)})`);
    assert.equal(pm.translatePodUID(uid), model.translate(uid), `${where}: translatePodUID(${JSON.stringify(uid)})`);
  }
  for (const probe of universe.probes) {
    const fullName = fullNameOf(probe);
    const label = `${where}: probe ${modelIsMirror(probe) ? 'mirror' : 'pod'} ${fullName}`;
    assert.equal(pm.getPodByMirrorPod(probe), model.podByFullName.get(fullName), `${label}: getPodByMirrorPod`);
    assert.equal(pm.getMirrorPodByPod(probe), model.mirrorPodByFullName.get(fullName), `${label}: getMirrorPodByPod`);
    const expected = modelIsMirror(probe)
      ? { pod: model.podByFullName.get(fullName), mirrorPod: probe, wasMirror: true }
      : { pod: probe, mirrorPod: model.mirrorPodByFullName.get(fullName), wasMirror: false };
    const actual = pm.getPodAndMirrorPod(probe);
    assert.equal(actual.pod, expected.pod, `${label}: getPodAndMirrorPod().pod`);
    assert.equal(actual.mirrorPod, expected.mirrorPod, `${label}: getPodAndMirrorPod().mirrorPod`);
    assert.equal(actual.wasMirror, expected.wasMirror, `${label}: getPodAndMirrorPod().wasMirror`);
  }

  const expectedPods = asSet(model.podByUID.values());
  const expectedMirrors = asSet(model.mirrorPodByUID.values());
  const expectedOrphans = asSet([...model.mirrorPodByFullName.keys()].filter((n) => !model.podByFullName.has(n)));
  const pods = pm.getPods();
  assert.equal(pods.length, expectedPods.size, `${where}: getPods() length`);
  assert.deepEqual(asSet(pods), expectedPods, `${where}: getPods()`);
  const all = pm.getPodsAndMirrorPods();
  assert.equal(all.pods.length, expectedPods.size, `${where}: getPodsAndMirrorPods().pods length`);
  assert.deepEqual(asSet(all.pods), expectedPods, `${where}: getPodsAndMirrorPods().pods`);
  assert.equal(all.mirrorPods.length, expectedMirrors.size, `${where}: mirrorPods length`);
  assert.deepEqual(asSet(all.mirrorPods), expectedMirrors, `${where}: getPodsAndMirrorPods().mirrorPods`);
  assert.equal(all.orphanedMirrorPodFullNames.length, expectedOrphans.size, `${where}: orphans length`);
  assert.deepEqual(asSet(all.orphanedMirrorPodFullNames), expectedOrphans, `${where}: orphaned mirror full names`);
  assert.deepEqual(asSet(pm.getOrphanedMirrorPodNames()), expectedOrphans, `${where}: getOrphanedMirrorPodNames()`);

  const { podToMirror, mirrorToPod } = pm.getUIDTranslations();
  const expectedTranslations = model.translations();
  assert.deepEqual(new Map(mirrorToPod), expectedTranslations.mirrorToPod, `${where}: getUIDTranslations().mirrorToPod`);
  assert.deepEqual(
    asSet(podToMirror.keys()),
    asSet(expectedTranslations.podToMirror.keys()),
    `${where}: getUIDTranslations().podToMirror keys`,
  );
  for (const [podUID, mirrorUID] of podToMirror) {
    const candidates = expectedTranslations.podToMirror.get(podUID)!;
    assert.ok(
      candidates.has(mirrorUID),
      `${where}: podToMirror[${JSON.stringify(podUID)}] = ${JSON.stringify(mirrorUID)}, expected one of ${JSON.stringify([...candidates])}`,
    );
  }

  assert.equal(await ephemeralGauge(registry), model.ephemeralContainers(), `${where}: ephemeral container gauge`);
}

test('PodManager agrees with a reference model of basicManager after every call of random sequences', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(callArb, { minLength: 1, maxLength: 40 }), async (calls) => {
      const registry = new Registry();
      const pm = new PodManager({ registry });
      const model = new ModelManager();
      await compare(pm, model, registry, 'new manager');
      for (const [i, call] of calls.entries()) {
        switch (call.op) {
          case 'setPods':
            pm.setPods(call.pods);
            model.setPods(call.pods);
            break;
          case 'addPod':
          case 'updatePod':
            pm[call.op](call.pod);
            model.upsert(call.pod);
            break;
          case 'removePod':
          case 'deletePod':
            pm[call.op](call.pod);
            model.remove(call.pod);
            break;
        }
        await compare(pm, model, registry, `after call ${i + 1} ${describeCall(call)}`);
      }
    }),
    { numRuns: 300 },
  );
});

test('the reference model is not vacuous: it sees collisions the manager must handle', () => {
  // Guards the property above against a generator that never produces the interesting cases.
  const model = new ModelManager();
  const staticPod = newPod('u1', 'a', 'default', 'static');
  const firstMirror = newPod('u2', 'a', 'default', 'mirror');
  const secondMirror = newPod('u3', 'a', 'default', 'mirror');
  model.setPods([staticPod, firstMirror, secondMirror]);
  model.remove(staticPod);
  const { podToMirror, mirrorToPod } = model.translations();
  assert.deepEqual(mirrorToPod, new Map([['u2', 'u1'], ['u3', 'u1']]));
  assert.deepEqual(podToMirror, new Map([['u1', new Set(['u2', 'u3'])]]));
  assert.equal(model.translate('u2'), 'u1');
});

test('PodManager agrees with the model over long churn on a larger universe (index sweeps and rebuilds)', async () => {
  // Hundreds of names and UIDs, thousands of calls, and checks far apart: removed keys pile up
  // until the indexes sweep them, and the by-name index drops its change log and rebuilds.
  const names = [...Array.from({ length: 60 }, (_, i) => `p${i}`), 'x_y'];
  const namespaces = ['default', 'kube-system', 'a_b'];
  const uids = Array.from({ length: 120 }, (_, i) => `u${i}`);
  const probes = names.flatMap((name) =>
    namespaces.flatMap((namespace) => [newPod('probe-mirror', name, namespace, 'mirror'), newPod('probe-pod', name, namespace, 'static')]),
  );
  const universe: Universe = { names, namespaces, uids, probes };
  const pickFrom = <T>(items: readonly T[], random: () => number): T => items[Math.floor(random() * items.length)]!;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (seed) => {
      // A small deterministic generator: fast-check shrinks the seed, the sequence follows from it.
      let state = seed;
      const random = (): number => {
        state = (Math.imul(state, 48271) >>> 0) % 2147483647;
        return state / 2147483647;
      };
      const pool = Array.from({ length: 300 }, () =>
        newPod(pickFrom(uids, random), pickFrom(names, random), pickFrom(namespaces, random), pickFrom(KINDS, random), {
          ephemeral: Math.floor(random() * 3),
        }),
      );
      const registry = new Registry();
      const pm = new PodManager({ registry });
      const model = new ModelManager();
      const checkpoints = new Set([50, 120, 400, 2600, 2700, 4000]);
      for (let i = 1; i <= 4000; i++) {
        // Mostly objects seen before (removed and added again), sometimes a new object.
        const pod = random() < 0.9 ? pickFrom(pool, random) : newPod(pickFrom(uids, random), pickFrom(names, random), pickFrom(namespaces, random), pickFrom(KINDS, random));
        if (random() < 0.45) {
          pm.removePod(pod);
          model.remove(pod);
        } else {
          pm.addPod(pod);
          model.upsert(pod);
        }
        if (checkpoints.has(i)) await compare(pm, model, registry, `seed ${seed}, after call ${i}`, universe);
      }
    }),
    { numRuns: 8 },
  );
});
