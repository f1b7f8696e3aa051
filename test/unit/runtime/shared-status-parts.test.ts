// src/runtime/shared-status-parts.ts and its users: the parts of generated statuses that pods
// have equal are one frozen object each, and a status built from them equals one built anew.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { hostIPList, madeEachTime, runningState, secondOf, sharedByContent, sharedCondition } from '../../../src/runtime/shared-status-parts.js';
import { mounts } from '../../../src/runtime/pod-status-parts.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';
import { containerResourceStatus } from '../../../src/runtime/container-status.js';
import { NO_INIT_RUNS, runtimeView, updateRuntimeView, type ContainerRun, type TrackedPod } from '../../../src/runtime/runtime-state.js';
import { createContainerLogBuffer } from '../../../src/runtime/container-log-buffer.js';
import type { Pod } from '../../../src/pod/types.js';

describe('shared status parts', () => {
  test('times are whole seconds, one Date per second', () => {
    const a = secondOf(Date.UTC(2026, 0, 1, 12, 0, 5, 250));
    const b = secondOf(Date.UTC(2026, 0, 1, 12, 0, 5, 999));
    assert.equal(a, b);
    assert.equal(a.toISOString(), '2026-01-01T12:00:05.000Z');
    assert.notEqual(secondOf(Date.UTC(2026, 0, 1, 12, 0, 6)), a);
  });

  test('equal conditions are one frozen object; a reason left out differs from an empty one', () => {
    const at = secondOf(Date.UTC(2026, 0, 1));
    const ready = sharedCondition('Ready', 'True', at);
    assert.equal(sharedCondition('Ready', 'True', at), ready);
    assert.deepEqual(ready, { type: 'Ready', status: 'True', lastTransitionTime: at });
    assert.ok(Object.isFrozen(ready));
    assert.throws(() => {
      (ready as { status: string }).status = 'False';
    }, TypeError);
    const empty = sharedCondition('Ready', 'True', at, '');
    assert.notEqual(empty, ready);
    assert.equal(empty.reason, '');
    assert.notEqual(sharedCondition('Ready', 'False', at, 'ContainersNotReady', 'm'), sharedCondition('Ready', 'False', at, 'ContainersNotReady', 'n'));
  });

  test('running states and the host address list are held once', () => {
    const at = secondOf(Date.UTC(2026, 0, 2));
    assert.equal(runningState(at), runningState(secondOf(at.getTime() + 300)));
    assert.deepEqual(runningState(at), { running: { startedAt: at } });
    assert.equal(hostIPList('10.0.0.1'), hostIPList('10.0.0.1'));
    assert.deepEqual(hostIPList('10.0.0.1'), [{ ip: '10.0.0.1' }]);
    assert.ok(Object.isFrozen(hostIPList('10.0.0.1')[0]));
  });

  test('what a container spec decides: equal values held once by content, deeply frozen; or made each time', () => {
    let calls = 0;
    const derive = sharedByContent((c: V1Container) => {
      calls++;
      return { names: [c.name] };
    });
    const spec: V1Container = { name: 'main' };
    const first = derive(spec);
    assert.equal(derive({ name: 'main' }), first, 'another spec object with equal content: the same part');
    assert.equal(calls, 2, 'derived at each call, the value compared');
    assert.ok(Object.isFrozen(first.names));
    assert.notEqual(derive({ name: 'other' }), first);
    const each = madeEachTime((c: V1Container) => ({ names: [c.name] }));
    assert.notEqual(each(spec), each(spec));
    assert.ok(Object.isFrozen(each(spec).names));
    const resources = containerResourceStatus({ name: 'c', resources: { limits: { cpu: '1' } } });
    assert.deepEqual(resources, { resources: { limits: { cpu: '1' }, requests: { cpu: '1' } }, allocatedResources: { cpu: '1' } });
    assert.equal(containerResourceStatus({ name: 'd', resources: { limits: { cpu: '1' } } }), resources);
  });

  test('nothing is kept per container spec: a pod\'s mounts and resources live only in its statuses', async () => {
    const node = { hostIP: '10.0.0.1', recursiveReadOnlyMounts: false, stopMs: 0, startJitterMs: 0, clusterDNS: true };
    // Each pod's service account mount has a name of its own, as the API server gives it.
    const containers: V1Container[] = Array.from({ length: 60_000 }, (_, i) => ({
      name: 'main',
      resources: { requests: { cpu: '100m', memory: '64Mi' } },
      volumeMounts: [{ name: `kube-api-access-${i}`, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
    }));
    const bytes = await retainedBytesPer(containers.length, (i) => {
      mounts(containers[i]!, node);
      containerResourceStatus(containers[i]!);
    });
    // Held per container spec (a weak map's entries and the parts), as before: about 600 bytes.
    assert.ok(bytes < 40, `${bytes.toFixed(1)} bytes kept per container spec`);
  });
});

describe('the runtime view of a pod', () => {
  const pod = (status: object, gates = false): Pod => ({
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [{ name: 'main' }], ...(gates ? { readinessGates: [{ conditionType: 'x' }] } : {}) },
    status,
  });

  test('keeps the metadata and spec, not the status, and follows a new spec or metadata', () => {
    const first = pod({ phase: 'Pending' });
    const view = runtimeView(first);
    assert.equal(view.metadata, first.metadata);
    assert.equal(view.spec, first.spec);
    assert.equal(view.status, undefined);
    const tracked = { pod: view } as TrackedPod;
    // A status-only change (the merger keeps metadata and spec): the same view.
    updateRuntimeView(tracked, { ...first, status: { phase: 'Running' } });
    assert.equal(tracked.pod, view);
    const edited = { ...first, spec: { containers: [{ name: 'other' }] } };
    updateRuntimeView(tracked, edited);
    assert.equal(tracked.pod.spec, edited.spec);
  });

  test('the one empty map of init runs refuses entries', () => {
    assert.equal(NO_INIT_RUNS.size, 0);
    assert.throws(() => NO_INIT_RUNS.set('init', {} as ContainerRun), /no init container runs/);
    assert.equal(NO_INIT_RUNS.size, 0);
  });

  test('a pod with readiness gates is kept whole, its newest version included', () => {
    const first = pod({ conditions: [] }, true);
    assert.equal(runtimeView(first), first);
    const tracked = { pod: runtimeView(first) } as TrackedPod;
    const next = { ...first, status: { conditions: [{ type: 'x', status: 'True' }] } };
    updateRuntimeView(tracked, next);
    assert.equal(tracked.pod, next);
  });
});

describe('container log lines', () => {
  test('equal lines of two pods are one string; lines keep their order and times', () => {
    const logs = createContainerLogBuffer();
    const at = new Date(Date.UTC(2026, 0, 1));
    logs.append('a', 'main', at, `started container ${JSON.stringify('main')}`);
    logs.append('b', 'main', at, `started container ${JSON.stringify('main')}`);
    logs.append('a', 'main', new Date(at.getTime() + 1000), 'one\ntwo');
    const a = logs.lines('a', 'main') ?? [];
    assert.deepEqual(a.map((l) => [l.time.getTime() - at.getTime(), l.text]), [[0, 'started container "main"'], [1000, 'one'], [1000, 'two']]);
    assert.equal(logs.lines('b', 'main')?.[0]?.text, a[0]?.text);
  });
});
