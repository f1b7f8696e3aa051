// src/runtime/shared-status-parts.ts and its users: the parts of generated statuses that pods
// have equal are one frozen object each, and a status built from them equals one built anew.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { hostIPList, perContainerSpec, runningState, secondOf, sharedCondition } from '../../../src/runtime/shared-status-parts.js';
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

  test('what a container spec decides is derived once per spec object, deeply frozen', () => {
    let calls = 0;
    const derive = perContainerSpec((c: V1Container) => {
      calls++;
      return { names: [c.name] };
    });
    const spec: V1Container = { name: 'main' };
    assert.equal(derive(spec), derive(spec));
    assert.equal(calls, 1);
    assert.ok(Object.isFrozen(derive(spec).names));
    derive({ name: 'main' });
    assert.equal(calls, 2, 'another spec object: derived again');
    const resources = containerResourceStatus({ name: 'c', resources: { limits: { cpu: '1' } } });
    assert.deepEqual(resources, { resources: { limits: { cpu: '1' }, requests: { cpu: '1' } }, allocatedResources: { cpu: '1' } });
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
