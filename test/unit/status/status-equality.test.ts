// Status equality as the API server would store it: the comparisons of the kubelet's status
// manager (pkg/kubelet/status/status_manager_test.go: TestStatusEquality,
// TestStatusNormalizeTimeStamp), applied to client objects and watch JSON as they are.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PodStatus } from '@kubernetes/client-node';
import { sameStatus, sameStoredValue } from '../../../src/status/status-equality.js';

const json = (text: string) => JSON.parse(text) as V1PodStatus;

describe('sameStatus', () => {
  it('normalises times to seconds, ignores empty values and server-only fields', () => {
    const ours: V1PodStatus = {
      phase: 'Running',
      startTime: new Date('2026-01-01T00:00:00.000Z'),
      containerStatuses: [{ name: 'a', image: 'x', imageID: '', ready: true, restartCount: 0 }],
    };
    const theirs = json(
      '{"phase":"Running","qosClass":"BestEffort","startTime":"2026-01-01T00:00:00Z","containerStatuses":[{"name":"a","image":"x","ready":true,"restartCount":0}]}',
    );
    assert.ok(sameStatus(ours, theirs));
    assert.ok(!sameStatus({ ...ours, phase: 'Pending' }, theirs));
  });

  it('compares Date objects and RFC 3339 strings at whole seconds', () => {
    const at = (startTime: unknown) => ({ startTime }) as V1PodStatus;
    assert.ok(sameStatus(at(new Date('2026-01-01T00:00:05.999Z')), at('2026-01-01T00:00:05Z')), 'Date vs string');
    assert.ok(sameStatus(at('2026-01-01T00:00:05.123456Z'), at(new Date('2026-01-01T00:00:05Z'))), 'fractional string vs Date');
    assert.ok(sameStatus(at('2026-01-01T00:00:05.5Z'), at('2026-01-01T00:00:05Z')), 'fractional vs whole string');
    assert.ok(!sameStatus(at(new Date('2026-01-01T00:00:06.000Z')), at('2026-01-01T00:00:05Z')), 'another second');
    assert.ok(!sameStatus(at(new Date('2026-01-01T00:00:05Z')), at('Thursday')), 'not a time');
  });

  it("treats Go's omitempty empties as absent, nested too", () => {
    const ours: V1PodStatus = {
      phase: 'Running',
      message: '',
      reason: null as unknown as string,
      nominatedNodeName: undefined,
      hostIPs: [],
      containerStatuses: [{ name: 'a', image: 'x', imageID: '', ready: true, restartCount: 0, state: {}, lastState: { waiting: {} } }],
    };
    const theirs = json('{"phase":"Running","message":null,"containerStatuses":[{"name":"a","image":"x","ready":true,"restartCount":0,"containerID":""}]}');
    assert.ok(sameStatus(ours, theirs));
    const differs = json('{"phase":"Running","containerStatuses":[{"name":"a","image":"x","ready":true,"restartCount":0,"started":true}]}');
    assert.ok(!sameStatus(ours, differs), 'a nested field only theirs has counts (containerStatuses are replaced whole)');
  });

  it('matches conditions by type, in any order, counting only the kubelet-owned ones of ours', () => {
    const ours: V1PodStatus = {
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: new Date('2026-01-01T00:00:00Z') },
        { type: 'PodScheduled', status: 'True' },
        { type: 'example.com/NotSent', status: 'True' },
      ],
    };
    const theirs = json(
      '{"conditions":[{"type":"example.com/Gate","status":"False"},{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"},{"type":"Initialized","status":"True"}]}',
    );
    assert.ok(sameStatus(ours, theirs), "theirs' extra conditions and our foreign ones do not count");
    const stale = json('{"conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"ContainersNotReady"}]}');
    assert.ok(!sameStatus(ours, stale), 'a field only their condition has counts (we would clear it)');
    assert.ok(!sameStatus(ours, json('{"conditions":[{"type":"PodScheduled","status":"True"}]}')), 'a missing condition counts');
  });

  it('ignores resourceClaimStatuses, which are not ours to write', () => {
    assert.ok(sameStatus({ phase: 'Running', resourceClaimStatuses: [{ name: 'c' }] }, { phase: 'Running' }));
  });
});

describe('sameStoredValue', () => {
  it('TestStatusEquality: conditions in another order are equal, a condition more or less is not', () => {
    const a: V1PodStatus = {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'PodScheduled', status: 'True' },
        { type: 'example.com/feature', status: 'True' },
      ],
    };
    const reordered: V1PodStatus = { conditions: [a.conditions![2]!, a.conditions![0]!, a.conditions![1]!] };
    assert.ok(sameStoredValue(a, reordered));
    // Unlike sameStatus, every condition counts here: this tells a new status from the cached one.
    assert.ok(!sameStoredValue(a, { conditions: a.conditions!.slice(0, 2) }), 'one condition fewer');
    assert.ok(!sameStoredValue({ conditions: a.conditions!.slice(0, 2) }, a), 'one condition more');
    assert.ok(
      !sameStoredValue(a, { conditions: [a.conditions![0]!, a.conditions![1]!, { type: 'example.com/feature', status: 'False' }] }),
      'a foreign condition that changed',
    );
  });

  it('TestStatusNormalizeTimeStamp: nested times compare at whole seconds', () => {
    const at = (startedAt: unknown): V1PodStatus =>
      ({ containerStatuses: [{ name: 'c', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt } } }] }) as V1PodStatus;
    assert.ok(sameStoredValue(at(new Date('2026-01-01T00:00:05.731Z')), at(new Date('2026-01-01T00:00:05Z'))));
    assert.ok(sameStoredValue(at(new Date('2026-01-01T00:00:05.731Z')), at('2026-01-01T00:00:05Z')), 'a Date and the JSON string');
    assert.ok(!sameStoredValue(at(new Date('2026-01-01T00:00:05Z')), at(new Date('2026-01-01T00:00:04.999Z'))), 'the second before');
    assert.ok(!sameStoredValue(at(new Date('2026-01-01T00:00:05Z')), at('5 seconds past')), 'a string that is not a time');
  });

  it("treats Go's omitempty empties as absent, on both sides", () => {
    assert.ok(sameStoredValue({ phase: 'Running', message: '', hostIPs: [], nominatedNodeName: undefined }, json('{"phase":"Running","reason":null}')));
    assert.ok(sameStoredValue(json('{"phase":"Running","reason":null}'), { phase: 'Running', message: '' }));
    assert.ok(!sameStoredValue({ phase: 'Running' }, json('{"phase":"Running","message":"m"}')), 'a field only the second has');
    assert.ok(!sameStoredValue({ phase: 'Running', message: 'm' }, { phase: 'Running' }), 'a field only the first has');
    assert.ok(sameStoredValue(undefined, {}), 'an empty object is absent');
    assert.ok(!sameStoredValue(0, undefined), 'zero is a value');
  });

  it('compares lists item by item, skipping empty items', () => {
    assert.ok(sameStoredValue([{ ip: '10.0.0.1' }, {}], [{ ip: '10.0.0.1' }]));
    assert.ok(!sameStoredValue([{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], [{ ip: '10.0.0.2' }, { ip: '10.0.0.1' }]), 'order counts');
    assert.ok(!sameStoredValue([{ ip: '10.0.0.1' }], [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }]), 'length counts');
    assert.ok(!sameStoredValue([{ ip: '10.0.0.1' }], { ip: '10.0.0.1' }), 'a list is not an object');
  });
});
