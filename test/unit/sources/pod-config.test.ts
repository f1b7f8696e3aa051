// Mirrors pkg/kubelet/config/config_test.go (MG-*) and mux_test.go (MX-*).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Pod } from '../../../src/pod/types.js';
import { canonicalJSON } from '../../../src/values/canonical-json.js';
import { Mux } from '../../../src/sources/mux.js';
import { createPodConfig, type PodConfig, type PodConfigEvent, type PodConfigMode } from '../../../src/sources/pod-config.js';
import { copyWith, formatSeenTimestamp, mergePodVersion, stampNewPod } from '../../../src/sources/pod-diff.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { createSourcesReady } from '../../../src/sources/sources-ready.js';
import type { PodUpdate } from '../../../src/sources/types.js';

const TEST = 'test';
const LOCAL = ['kubernetes.io/config.source', 'kubernetes.io/config.mirror', 'kubernetes.io/config.seen'];

function createValidPod(name: string, namespace: string): Pod {
  return {
    metadata: { uid: name + namespace, name, namespace },
    spec: {
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      containers: [{ name: 'ctr', image: 'image', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File', securityContext: {} }],
    },
  };
}

const upd = (op: PodUpdate['op'], pods: Pod[], source = TEST): PodUpdate => ({ op, source, pods });

function createPodConfigTester(mode: PodConfigMode = 'Incremental') {
  const config = createPodConfig({ mode, clock: new FakeClock(Date.parse('2024-05-06T07:08:09.123Z')) });
  return { config, channel: config.channel(TEST) };
}

/** What the Go "expect" helper compares: op, source, and per pod the semantic fields and status. */
function comparable(u: PodUpdate): unknown {
  return {
    op: u.op,
    source: u.source,
    pods: u.pods.map((p) => {
      const annotations = { ...(p.metadata?.annotations ?? {}) };
      for (const k of LOCAL) delete annotations[k];
      return JSON.parse(
        canonicalJSON({
          spec: p.spec,
          labels: p.metadata?.labels ?? {},
          deletionTimestamp: p.metadata?.deletionTimestamp,
          deletionGracePeriodSeconds: p.metadata?.deletionGracePeriodSeconds,
          annotations,
          status: p.status ?? {},
        }),
      );
    }),
  };
}

/** Takes exactly the expected updates, then asserts nothing else is queued. */
function expectPodUpdates(config: PodConfig, ...expected: PodUpdate[]): void {
  const got: PodUpdate[] = [];
  for (let i = 0; i < expected.length; i++) {
    const u = config.updates.tryNext();
    assert.ok(u, `expected update #${i + 1} (${expected[i]!.op}), got none`);
    got.push(u);
  }
  assert.deepEqual(got.map(comparable), expected.map(comparable));
  expectNoPodUpdate(config);
}

function expectNoPodUpdate(config: PodConfig): void {
  const extra = config.updates.tryNext();
  assert.equal(extra, undefined, `unexpected update ${extra ? `${extra.op} ${extra.source}` : ''}`);
}

const withContainerBar = (pod: Pod): Pod => ({
  ...structuredClone(pod),
  spec: { ...pod.spec!, containers: [{ name: 'bar', image: 'test', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }] },
});

describe('MG merge', () => {
  for (const [id, goName, ns] of [
    ['MG-1', 'TestNewPodAdded', 'new'],
    ['MG-2', 'TestNewPodAddedInvalidNamespace', ''],
    ['MG-3', 'TestNewPodAddedDefaultNamespace', 'default'],
  ] as const) {
    test(`${id} ${goName}`, () => {
      const { config, channel } = createPodConfigTester();
      channel(upd('ADD', [createValidPod('foo', ns)]));
      expectPodUpdates(config, upd('ADD', [createValidPod('foo', ns)]));
      config.sync();
      expectPodUpdates(config, upd('SET', [createValidPod('foo', ns)], '*'));
    });
  }

  test('MG-4 TestNewPodAddedDifferentNamespaces', () => {
    const { config, channel } = createPodConfigTester();
    channel(upd('ADD', [createValidPod('foo', 'default')]));
    expectPodUpdates(config, upd('ADD', [createValidPod('foo', 'default')]));
    channel(upd('ADD', [createValidPod('foo', 'new')]));
    expectPodUpdates(config, upd('ADD', [createValidPod('foo', 'new')]));
    config.sync();
    expectPodUpdates(config, upd('SET', [createValidPod('foo', 'default'), createValidPod('foo', 'new')], '*'));
  });

  test('MG-5 TestInvalidPodFiltered', () => {
    const { config, channel } = createPodConfigTester();
    channel(upd('ADD', [createValidPod('foo', 'new')]));
    expectPodUpdates(config, upd('ADD', [createValidPod('foo', 'new')]));
    channel(upd('ADD', [createValidPod('foo', 'new')]));
    expectNoPodUpdate(config);
  });

  for (const [id, goName, mode, lastOp] of [
    ['MG-6', 'TestNewPodAddedSnapshotAndUpdates', 'SnapshotAndUpdates', 'UPDATE'],
    ['MG-7', 'TestNewPodAddedSnapshot', 'Snapshot', 'SET'],
  ] as const) {
    test(`${id} ${goName}`, () => {
      const { config, channel } = createPodConfigTester(mode);
      channel(upd('ADD', [createValidPod('foo', 'new')]));
      expectPodUpdates(config, upd('SET', [createValidPod('foo', 'new')]));
      config.sync();
      expectPodUpdates(config, upd('SET', [createValidPod('foo', 'new')], '*'));
      const changed = withContainerBar(createValidPod('foo', 'new'));
      channel(upd('ADD', [changed]));
      expectPodUpdates(config, upd(lastOp, [changed]));
    });
  }

  test('MG-8 TestNewPodAddedUpdatedRemoved', () => {
    const { config, channel } = createPodConfigTester();
    const pod = createValidPod('foo', 'new');
    channel(upd('ADD', [pod]));
    expectPodUpdates(config, upd('ADD', [pod]));
    const changed = withContainerBar(pod);
    channel(upd('ADD', [changed]));
    expectPodUpdates(config, upd('UPDATE', [changed]));
    channel(upd('REMOVE', [pod]));
    expectPodUpdates(config, upd('REMOVE', [changed]));
  });

  test('MG-9 TestNewPodAddedDelete', () => {
    const { config, channel } = createPodConfigTester();
    const pod = createValidPod('foo', 'new');
    channel(upd('ADD', [pod]));
    expectPodUpdates(config, upd('ADD', [pod]));
    const deleting = structuredClone(pod);
    deleting.metadata!.deletionTimestamp = new Date('2024-01-01T00:00:00Z');
    channel(upd('DELETE', [deleting]));
    const [u] = [config.updates.tryNext()];
    assert.equal(u?.op, 'DELETE');
    assert.equal(new Date(u!.pods[0]!.metadata!.deletionTimestamp!).toISOString(), '2024-01-01T00:00:00.000Z');
    expectNoPodUpdate(config);
  });

  test('a semantic change takes the new generation with it, a status-only one keeps the first-seen metadata (checkAndUpdatePod)', () => {
    const { config, channel } = createPodConfigTester();
    const pod = createValidPod('foo', 'new');
    pod.metadata = { ...pod.metadata, generation: 1, resourceVersion: '10' };
    channel(upd('ADD', [pod]));
    config.updates.tryNext();
    // The API server raises the generation of a pod deleted gracefully; the kubelet reports it.
    const deleting = structuredClone(pod);
    deleting.metadata = { ...deleting.metadata, generation: 2, resourceVersion: '12', deletionTimestamp: new Date('2024-01-01T00:00:00Z'), deletionGracePeriodSeconds: 30 };
    channel(upd('DELETE', [deleting]));
    const deleted = config.updates.tryNext();
    assert.equal(deleted?.op, 'DELETE');
    assert.equal(deleted.pods[0]!.metadata?.generation, 2);
    assert.equal(deleted.pods[0]!.metadata?.resourceVersion, '10', 'the rest of the metadata is the stored one');
    const statusOnly = structuredClone(deleting);
    statusOnly.metadata = { ...statusOnly.metadata, resourceVersion: '13' };
    statusOnly.status = { phase: 'Running' };
    channel(upd('UPDATE', [statusOnly]));
    const reconciled = config.updates.tryNext();
    assert.equal(reconciled?.op, 'RECONCILE');
    assert.equal(reconciled.pods[0]!.metadata?.resourceVersion, '10');
    assert.equal(reconciled.pods[0]!.status?.phase, 'Running');
    expectNoPodUpdate(config);
  });

  test('MG-10 TestNewPodAddedUpdatedSet', () => {
    const { config, channel } = createPodConfigTester();
    const [foo, foo2, foo3, foo4] = ['foo', 'foo2', 'foo3', 'foo4'].map((n) => createValidPod(n, 'new'));
    channel(upd('ADD', [foo!, foo2!, foo3!]));
    expectPodUpdates(config, upd('ADD', [foo!, foo2!, foo3!]));
    const foo2b = withContainerBar(foo2!);
    channel(upd('SET', [foo2b, foo3!, foo4!]));
    expectPodUpdates(config, upd('REMOVE', [foo!]), upd('ADD', [foo4!]), upd('UPDATE', [foo2b]));
  });

  for (const op of ['ADD', 'SET'] as const) {
    test(`MG-11 TestNewPodAddedSetReconciled/${op}`, () => {
      const { config, channel } = createPodConfigTester();
      const pods = () => [createValidPod('changeable-pod-0', 'new'), createValidPod('constant-pod-1', 'new'), createValidPod('constant-pod-2', 'new')];
      channel(upd('SET', pods()));
      expectPodUpdates(config, upd('ADD', pods()));
      channel(upd(op, pods()));
      expectNoPodUpdate(config);
      const statusChanged = pods();
      statusChanged[0]!.status = { message: 'status changed' };
      channel(upd(op, statusChanged));
      expectPodUpdates(config, upd('RECONCILE', [statusChanged[0]!]));
      const specChanged = pods();
      specChanged[0]!.status = { message: 'status changed again' };
      specChanged[0]!.spec!.containers[0]!.name = 'ctr-changed';
      channel(upd(op, specChanged));
      expectPodUpdates(config, upd('UPDATE', [specChanged[0]!]));
    });
  }

  for (const [mode, op] of [
    ['Incremental', 'ADD'],
    ['Snapshot', 'SET'],
    ['SnapshotAndUpdates', 'SET'],
  ] as const) {
    test(`MG-12 TestInitialEmptySet/${mode}`, () => {
      const { config, channel } = createPodConfigTester(mode);
      channel(upd('SET', []));
      expectPodUpdates(config, upd(op, []));
      channel(upd('SET', []));
      expectNoPodUpdate(config);
      channel(upd('ADD', [createValidPod('foo', 'new')]));
      expectPodUpdates(config, upd(op, [createValidPod('foo', 'new')]));
    });
  }

  test('MG-13 TestPodUpdateAnnotations', () => {
    const { config, channel } = createPodConfigTester();
    const foo1 = createValidPod('foo1', 'new');
    const foo2 = createValidPod('foo2', 'new');
    foo2.metadata!.annotations = { 'kubernetes.io/blah': 'blah' };
    const foo3 = createValidPod('foo3', 'new');
    channel(upd('SET', [foo1, foo2, foo3]));
    expectPodUpdates(config, upd('ADD', [foo1, foo2, foo3]));
    const steps: Record<string, string>[] = [
      { 'kubernetes.io/blah': 'superblah' },
      { 'kubernetes.io/blah': 'superblah', 'kubernetes.io/otherblah': 'doh' },
      { 'kubernetes.io/otherblah': 'doh' },
    ];
    for (const annotations of steps) {
      const next = structuredClone(foo2);
      next.metadata!.annotations = annotations;
      channel(upd('SET', [foo1, next, foo3]));
      expectPodUpdates(config, upd('UPDATE', [next]));
    }
  });

  test('MG-14 TestPodUpdateLabels', () => {
    const { config, channel } = createPodConfigTester();
    const foo2 = createValidPod('foo2', 'new');
    foo2.metadata!.labels = { key: 'value' };
    channel(upd('SET', [foo2]));
    expectPodUpdates(config, upd('ADD', [foo2]));
    const next = structuredClone(foo2);
    next.metadata!.labels = { key: 'newValue' };
    channel(upd('SET', [next]));
    expectPodUpdates(config, upd('UPDATE', [next]));
  });

  test('MG-15 TestPodConfigRace', async () => {
    const config = createPodConfig();
    const seen = new Set(['test']);
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        config.channel(String(i));
        await Promise.resolve();
        return config.seenAllSources(seen);
      }),
    );
    assert.equal(config.sources().length, 100);
    assert.ok(results.every((r) => r === false));
  });
});

describe('merger details', () => {
  test('config.source is stamped (overriding the input) and config.seen set once per UID, 9 fractional digits', () => {
    const clock = new FakeClock(Date.parse('2024-05-06T07:08:09.123Z'));
    const config = createPodConfig({ clock });
    const ch = config.channel('file');
    const pod = createValidPod('foo', 'new');
    pod.metadata!.annotations = { 'kubernetes.io/config.source': 'api' };
    ch(upd('SET', [pod], 'whatever'));
    const added = config.updates.tryNext()!;
    assert.equal(added.source, 'file');
    const seen = added.pods[0]!.metadata!.annotations!['kubernetes.io/config.seen'];
    assert.equal(added.pods[0]!.metadata!.annotations!['kubernetes.io/config.source'], 'file');
    assert.match(seen ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.123000000(Z|[+-]\d\d:\d\d)$/);
    assert.equal(seen, formatSeenTimestamp(new Date('2024-05-06T07:08:09.123Z')));
    clock.setWallTime(new Date('2030-01-01T00:00:00Z'));
    ch(upd('SET', [withContainerBar(pod)]));
    const updated = config.updates.tryNext()!;
    assert.equal(updated.op, 'UPDATE');
    assert.equal(updated.pods[0]!.metadata!.annotations!['kubernetes.io/config.seen'], seen);
    assert.equal(pod.metadata!.annotations!['kubernetes.io/config.seen'], undefined, 'the input pod is not mutated');
  });

  test('config.seen is one string, not a concatenation of its parts, since every pod of a merge holds it', async () => {
    const date = new Date('2024-05-06T07:08:09.123Z');
    // 35 characters: one flat string is about 48 bytes; concatenated, its three parts and the
    // two joins holding them were about 160.
    const bytes = await retainedBytesPer(20_000, (i) => formatSeenTimestamp(new Date(date.getTime() + i)));
    assert.ok(bytes <= 64, `${bytes.toFixed(0)} bytes a timestamp`);
  });

  test('duplicate full names in one update: the first is kept, the later dropped with a FailedValidation event', () => {
    const events: PodConfigEvent[] = [];
    const config = createPodConfig({ onEvent: (e) => events.push(e) });
    const first = createValidPod('foo', 'new');
    const second = { ...createValidPod('foo', 'new'), metadata: { ...createValidPod('foo', 'new').metadata, uid: 'other' } };
    config.channel('file')(upd('SET', [first, second]));
    const u = config.updates.tryNext()!;
    assert.deepEqual(u.pods.map((p) => p.metadata?.uid), ['foonew']);
    assert.equal(events.length, 1);
    assert.equal(events[0]!.reason, 'FailedValidation');
    assert.equal(events[0]!.message, 'Error validating pod foo_new(other) from file due to duplicate pod name "foo", ignoring');
  });

  test('local annotation changes are not semantic; config.hash changes are; REMOVE of an unknown UID is a no-op', () => {
    const { config, channel } = createPodConfigTester();
    const pod = createValidPod('foo', 'new');
    pod.metadata!.annotations = { 'kubernetes.io/config.hash': 'h1' };
    channel(upd('SET', [pod]));
    config.updates.tryNext();
    const local = structuredClone(pod);
    local.metadata!.annotations!['kubernetes.io/config.mirror'] = 'x';
    channel(upd('SET', [local]));
    expectNoPodUpdate(config);
    const hash = structuredClone(pod);
    hash.metadata!.annotations!['kubernetes.io/config.hash'] = 'h2';
    channel(upd('SET', [hash]));
    assert.equal(config.updates.tryNext()?.op, 'UPDATE');
    channel(upd('REMOVE', [createValidPod('nobody', 'new')]));
    expectNoPodUpdate(config);
  });

  test('seenAllSources and SourcesReady: every source must SET and be processed', async () => {
    const config = createPodConfig();
    const file = config.channel('file');
    const http = config.channel('http');
    const ready = createSourcesReady((seen) => config.seenAllSources(seen));
    file(upd('SET', []));
    ready.addSource('file');
    assert.equal(ready.allReady(), false);
    ready.addSource('http');
    assert.equal(ready.allReady(), false, 'http processed but never sent a SET');
    http(upd('ADD', [createValidPod('a', 'b')]));
    assert.equal(ready.allReady(), false, 'an ADD is not a SET');
    http(upd('SET', []));
    assert.equal(ready.allReady(), true);
    const iter = config.updates[Symbol.asyncIterator]();
    const firstUpdate = await iter.next();
    assert.equal(firstUpdate.value.op, 'ADD');
  });
});

describe('MX mux', () => {
  const fakeMerger = () => {
    const calls: [string, string][] = [];
    return { calls, merger: { merge: (source: string, update: string) => calls.push([source, update]) } };
  };

  test('MX-1 TestConfigurationChannels', () => {
    const mux = new Mux(fakeMerger().merger);
    const one = mux.channel('one');
    assert.equal(mux.channel('one'), one);
    assert.notEqual(mux.channel('two'), one);
  });

  test('MX-2 TestMergeInvoked', () => {
    const { calls, merger } = fakeMerger();
    new Mux(merger).channel('one')('test');
    assert.deepEqual(calls, [['one', 'test']]);
  });

  test('MX-3 TestSimultaneousMerge', async () => {
    const { calls, merger } = fakeMerger();
    const mux = new Mux(merger);
    await Promise.all([Promise.resolve().then(() => mux.channel('one')('test')), Promise.resolve().then(() => mux.channel('two')('test2'))]);
    assert.deepEqual(
      calls.sort((a, b) => a[0].localeCompare(b[0])),
      [
        ['one', 'test'],
        ['two', 'test2'],
      ],
    );
  });
});

describe('PodConfig: unchanged API objects', () => {
  test('a SET repeating pods at the same resourceVersion changes nothing; a new resourceVersion is compared as usual', () => {
    const { config, channel } = createPodConfigTester();
    const pods = Array.from({ length: 200 }, (_, i) => ({ ...createValidPod(`p${i}`, 'ns'), metadata: { ...createValidPod(`p${i}`, 'ns').metadata, resourceVersion: '1' } }));
    channel(upd('SET', pods));
    assert.equal(config.updates.tryNext()?.pods.length, 200);
    channel(upd('SET', structuredClone(pods)));
    assert.equal(config.updates.tryNext(), undefined, 'same UIDs and resourceVersions: no update');
    const next = structuredClone(pods);
    next[7]!.metadata!.resourceVersion = '2';
    next[7]!.metadata!.labels = { changed: 'yes' };
    channel(upd('SET', next));
    const u = config.updates.tryNext();
    assert.equal(u?.op, 'UPDATE');
    assert.deepEqual(u?.pods.map((p) => p.metadata?.labels), [{ changed: 'yes' }]);
    // Status-only change at a new resourceVersion: still a RECONCILE.
    const again = structuredClone(next);
    again[3]!.metadata!.resourceVersion = '3';
    again[3]!.status = { phase: 'Running' };
    channel(upd('SET', again));
    assert.equal(config.updates.tryNext()?.op, 'RECONCILE');
    assert.equal(config.updates.tryNext(), undefined);
  });
});

describe('PodConfig: each pod held once', () => {
  test('an added pod shares its spec and status with the source object; emitted pods are the stored ones', () => {
    const { config, channel } = createPodConfigTester();
    const pod = { ...createValidPod('foo', 'new'), status: { phase: 'Pending' } };
    const frozen = Object.freeze(pod);
    channel(upd('SET', [frozen]));
    const added = config.updates.tryNext()!.pods[0]!;
    assert.notEqual(added, pod, 'the stamp is on a copy of the top level');
    assert.equal(added.spec, pod.spec);
    assert.equal(added.status, pod.status);
    assert.deepEqual(pod.metadata?.annotations, undefined, 'the input is not mutated');
    config.sync();
    assert.equal(config.updates.tryNext()!.pods[0], added, 'sync() gives the stored object');
  });

  test('a change gives a new stored object and leaves the one emitted before as it was', () => {
    const { config, channel } = createPodConfigTester();
    const pod = createValidPod('foo', 'new');
    channel(upd('SET', [pod]));
    const added = config.updates.tryNext()!.pods[0]!;
    const before = structuredClone(added);
    const statusOnly = { ...pod, status: { phase: 'Running' } };
    channel(upd('SET', [statusOnly]));
    const reconciled = config.updates.tryNext()!;
    assert.equal(reconciled.op, 'RECONCILE');
    assert.notEqual(reconciled.pods[0], added);
    assert.equal(reconciled.pods[0]!.metadata, added.metadata, 'a status change copies the top level only');
    const changed = withContainerBar(statusOnly);
    channel(upd('SET', [changed]));
    const updated = config.updates.tryNext()!.pods[0]!;
    assert.equal(updated.spec, changed.spec);
    assert.deepEqual(added, before, 'the object emitted first was not touched');
  });

  test('the stamped copies of pods of one shape share their hidden classes', async () => {
    // Pods as the watch decodes them: the same keys in the same order, no annotations.
    const watched = (i: number): Pod =>
      JSON.parse(JSON.stringify({ metadata: { name: `p${i}`, namespace: 'ns', uid: `u${i}`, resourceVersion: String(i), creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: 'a' } }, spec: { containers: [{ name: 'c' }] } }));
    const pods = Array.from({ length: 60_000 }, (_, i) => watched(i));
    const bytes = await retainedBytesPer(pods.length, (i) => stampNewPod(pods[i]!, 'api', 'seen'));
    // About 205 bytes; once the spread took its fast path, every stamped metadata and annotations
    // had a hidden class and descriptors of its own: about 470.
    assert.ok(bytes < 300, `${bytes.toFixed(1)} bytes per stamped copy`);
    const updated = Array.from({ length: 60_000 }, (_, i) => ({ ...watched(i), metadata: { ...pods[i]!.metadata, labels: { app: 'b' } } }));
    const stamped = pods.map((p) => stampNewPod(p, 'api', 'seen'));
    const merged = await retainedBytesPer(pods.length, (i) => mergePodVersion(stamped[i]!, updated[i]!, 'api'));
    // A changed version replaces the annotations' keys, adds none to the metadata: about 235 either way.
    assert.ok(merged < 300, `${merged.toFixed(1)} bytes per merged version`);
    const change = mergePodVersion(stamped[0]!, updated[0]!, 'api');
    assert.equal(change.change, 'update');
    assert.deepEqual(change.change === 'update' ? Object.keys(change.pod.metadata!) : [], ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'labels', 'annotations']);
  });

  test('a copy keeps a __proto__ key as data, as a spread does', () => {
    const base = JSON.parse('{"__proto__": "x", "a": "1"}') as Record<string, string>;
    const copy = copyWith(base, { b: '2' });
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(Object.entries(copy), [['__proto__', 'x'], ['a', '1'], ['b', '2']]);
  });

  test('a duplicate pair is warned once while it lasts, with both origins, and again when it comes back', () => {
    const lines: { fields: Record<string, unknown>; msg: string }[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (fields: object, msg?: string) => lines.push({ fields: fields as Record<string, unknown>, msg: msg ?? '' }) };
    const events: PodConfigEvent[] = [];
    const config = createPodConfig({ logger, onEvent: (e) => events.push(e) });
    const ch = config.channel('file');
    const a = createValidPod('foo', 'new');
    const b = { ...createValidPod('foo', 'new'), metadata: { ...createValidPod('foo', 'new').metadata, uid: 'other' } };
    const other = createValidPod('bar', 'new');
    const send = (pods: Pod[], origins: string[]): void => ch({ op: 'SET', source: 'file', pods, origins });
    send([a, b], ['/m/a.yaml', '/m/b.yaml']);
    send([a, b, other], ['/m/a.yaml', '/m/b.yaml', '/m/c.yaml']);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'pod ignored: an earlier pod of the same source has its full name');
    assert.deepEqual(lines[0]!.fields, { source: 'file', pod: 'foo_new', podUID: 'other', path: '/m/b.yaml', kept: '/m/a.yaml', keptUID: 'foonew', reason: 'FailedValidation' });
    assert.deepEqual(events.map((e) => [e.source, e.pod.metadata?.uid]), [['file', 'other']]);
    send([a, other], ['/m/a.yaml', '/m/c.yaml']);
    send([a, b, other], ['/m/a.yaml', '/m/b.yaml', '/m/c.yaml']);
    assert.equal(lines.length, 2, 'warned again after the duplicate went and came back');
  });

  test('a delta that touches no contested name is applied even while the set holds a duplicate', () => {
    const { config, channel } = createPodConfigTester();
    const a = createValidPod('foo', 'new');
    const dup = { ...createValidPod('foo', 'new'), metadata: { ...createValidPod('foo', 'new').metadata, uid: 'other' } };
    const pods = [a, dup, ...Array.from({ length: 20 }, (_, i) => createValidPod(`p${i}`, 'new'))];
    channel(upd('SET', pods));
    assert.equal(config.updates.tryNext()?.pods.length, 21);
    const untouchable = (pod: Pod): Pod =>
      new Proxy(pod, {
        get: () => {
          throw new Error(`unchanged pod ${pod.metadata?.uid} was read`);
        },
      });
    const added = createValidPod('new-one', 'new');
    const second = [...pods.map(untouchable), added];
    channel({ op: 'SET', source: TEST, pods: second, delta: { base: pods, changed: [added], removed: [] } });
    assert.deepEqual(config.updates.tryNext()?.pods.map((p) => p.metadata?.name), ['new-one']);
    // Removing the kept pod of the contested name needs the whole set (the other pod of that
    // name comes in): the delta is set aside and the full set, plain objects here, is merged.
    const next = [dup, ...pods.slice(2), added];
    channel({ op: 'SET', source: TEST, pods: next, delta: { base: second, changed: [], removed: [a] } });
    assert.deepEqual([config.updates.tryNext(), config.updates.tryNext()].map((u) => [u?.op, u?.pods.map((p) => p.metadata?.uid)]), [
      ['REMOVE', ['foonew']],
      ['ADD', ['other']],
    ]);
  });
});
