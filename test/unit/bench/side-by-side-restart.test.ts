// The side-by-side benchmark's restart rows (bench/agent/side-by-side.bench.ts): what
// BENCH_SBS_RESTART selects, one node identity per restart run, and that each row's ratio is
// ours over the kubelet's median, with a timed-out run counted as slower than any finished one.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { restartDetailTable, sideBySideCells, sideBySideCustomised, sideBySideNodes, sideBySideSizes, type RestartRun, type SideBySideResult } from '../../../bench/agent/side-by-side.bench.js';

const restart = (kind: RestartRun['kind'], pods: number, repeat: number, readyMs: number | null, runningMs: number | null, writes: number): RestartRun => ({
  kind,
  pods,
  repeat,
  order: 1,
  firstConvergeMs: 1000,
  readyMs,
  runningMs,
  mirrorsRunningInApi: pods,
  timedOut: readyMs === null ? ['Node Ready'] : [],
  requests: { PATCH: { '200': writes }, GET: { '200': 50 } },
  podChanges: 0,
});

function result(restarts: RestartRun[]): SideBySideResult {
  const sizes = { ...sideBySideSizes(true), idleSizes: [], burstSizes: [], restartSizes: [0, 100], restartRepeats: { 0: 2, 100: 2 } };
  return { qps: 50, burst: 100, maxPods: 1100, sizes, idle: [], bursts: [], restarts };
}

describe('side-by-side restart rows', () => {
  afterEach(() => {
    delete process.env.BENCH_SBS_RESTART;
    delete process.env.BENCH_SBS_REPEATS;
  });

  it('BENCH_SBS_RESTART and BENCH_SBS_REPEATS choose the sizes and runs, and mark the run as narrowed', () => {
    assert.deepEqual(sideBySideSizes(false).restartSizes, [0, 100, 1_000]);
    assert.equal(sideBySideCustomised(), false);
    process.env.BENCH_SBS_RESTART = '0,1000';
    process.env.BENCH_SBS_REPEATS = '3';
    const sizes = sideBySideSizes(true);
    assert.deepEqual(sizes.restartSizes, [0, 1000]);
    assert.deepEqual(sizes.restartRepeats, { 0: 3, 100: 1, 1000: 3 });
    assert.equal(sideBySideCustomised(), true);
  });

  it('gives every restart run a node of its own, for both agents', () => {
    const sizes = { ...sideBySideSizes(true), idleSizes: [], burstSizes: [], restartSizes: [0, 100], restartRepeats: { 0: 1, 100: 2 } };
    assert.deepEqual(sideBySideNodes(sizes), ['real-restart-0-r0', 'real-restart-100-r0', 'real-restart-100-r1', 'ours-restart-0-r0', 'ours-restart-100-r0', 'ours-restart-100-r1']);
  });

  it('each row is ours over the kubelet, medians of the runs; no Running row with no pods', () => {
    const cells = sideBySideCells(
      result([
        restart('kubelet', 0, 0, 400, null, 7),
        restart('ours', 0, 0, 1200, null, 3),
        restart('kubelet', 0, 1, 600, null, 9),
        restart('ours', 0, 1, 800, null, 3),
        restart('kubelet', 100, 0, 2000, 4000, 500),
        restart('ours', 100, 0, null, 1000, 3),
        restart('kubelet', 100, 1, 1000, 3000, 400),
        restart('ours', 100, 1, 500, 2000, 5),
      ]),
    );
    const row = (measure: string) => cells.find((c) => c.measure === measure);
    assert.deepEqual(row('restart with 0 static pods → Node Ready (median of 2)'), { measure: 'restart with 0 static pods → Node Ready (median of 2)', kubelet: '500 ms', ours: '1.00 s', ratio: 2 });
    assert.equal(row('restart with 0 static pods → all Running again on its /pods (median of 2)'), undefined);
    assert.equal(row('API writes during a restart with 0 static pods (median of 2)')?.ratio, 0.38);
    // A timed-out run is slower than any finished one: the median of [500, ∞] is ∞.
    assert.deepEqual(row('restart with 100 static pods → Node Ready (median of 2)'), { measure: 'restart with 100 static pods → Node Ready (median of 2)', kubelet: '1.50 s', ours: 'timed out', ratio: null });
    assert.equal(row('restart with 100 static pods → all Running again on its /pods (median of 2)')?.ratio, 0.43);
    assert.equal(row('API writes during a restart with 100 static pods (median of 2)')?.ours, '4');
  });

  it('the detail table has one line per run with its writes by method (GETs left out)', () => {
    const table = restartDetailTable(result([restart('ours', 100, 0, 500, 2000, 5)]));
    const lines = table.split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[2]!, /^\| 100 \| 1 \| ours \| 1 \| 1\.00 s \| 500 ms \| 2\.00 s \| 100 \| 0 \| PATCH 5×200 \|$/);
  });
});
