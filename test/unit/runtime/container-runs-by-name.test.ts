// The runtime's per-pod container runs: the part of a Map's behaviour the runtime relies on.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ContainerRunsByName } from '../../../src/runtime/container-runs-by-name.js';
import type { ContainerRun } from '../../../src/runtime/runtime-state.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

const run = (startedAt: number): ContainerRun => ({ state: 'running', restartCount: 0, startedAt, terminated: undefined, last: undefined, crashLoop: undefined, timer: undefined });

describe('ContainerRunsByName', () => {
  it('finds, replaces and lists runs by name in the order they were added', () => {
    const runs = new ContainerRunsByName();
    assert.equal(runs.size, 0);
    assert.equal(runs.get('web'), undefined);
    const web = run(1);
    const sidecar = run(2);
    runs.set('web', web).set('sidecar', sidecar);
    assert.equal(runs.size, 2);
    assert.equal(runs.get('web'), web);
    assert.ok(runs.has('sidecar') && !runs.has('other'));
    const again = run(3);
    runs.set('web', again);
    assert.equal(runs.size, 2, 'a name is held once');
    assert.deepEqual([...runs], [['web', again], ['sidecar', sidecar]]);
    assert.deepEqual([...runs.values()], [again, sidecar]);
    const third = run(4);
    runs.set('third', third).set('sidecar', again);
    assert.deepEqual([...runs], [['web', again], ['sidecar', again], ['third', third]]);
    assert.equal(runs.get('third'), third);
    assert.equal(runs.size, 3);
  });

  it('is built from entries as a Map is', () => {
    const a = run(1);
    const runs = new ContainerRunsByName([['a', a]]);
    assert.deepEqual([...runs], [...new Map([['a', a]])]);
  });
});

describe('ContainerRunsByName memory', () => {
  it('holds a one-container pod\'s run in fields of its own, without an array', async () => {
    const shared = run(1);
    const bytes = await retainedBytesPer(60_000, () => new ContainerRunsByName().set('main', shared));
    // About 48 bytes; with a (name, run) list, the object, the array and its backing store, 96.
    assert.ok(bytes < 72, `${bytes.toFixed(1)} bytes per list`);
  });
});
