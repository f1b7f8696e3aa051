// The kwok benchmark's sizes, peers, results name and table (bench/agent/kwok.bench.ts and
// run-kwok.ts): what a user sets through the environment, and that the table's ratios are each
// fleet's value over kwok's on the same row.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { LARGE_WAVE_SETTLE_MS, kwokBenchPeers, kwokBenchSizes, kwokTable, settleGcsInLog, type IdleWindow, type KwokBenchResult, type PeerRun } from '../../../bench/agent/kwok.bench.js';
import { kwokResultsName } from '../../../bench/agent/run-kwok.js';
import { countWrites, type PhaseWrites } from '../../../bench/agent/audit-writes.js';
import { SETTLE_GC_LIMITS, SETTLE_GC_WINDOW_MS } from '../../../src/fleet/settle-gc.js';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const idle = (rssMiB: number, cpu: number, cp: number): IdleWindow => ({ windowMs: 1000, rssBytes: rssMiB * 1024 * 1024, rssMaxBytes: rssMiB * 1024 * 1024, cpuPercent: cpu, controlPlaneCpuPercent: cp, fromMs: 0, toMs: 60_000 });

const writes = (total: number, byKind: Record<string, number>, durationMs = 60_000, podReads = 0): PhaseWrites => ({ phase: 'p', durationMs, total, byKind, podReads, leaseGaps: { count: 0, p99Ms: 0, maxMs: 0 } });

function run(peer: PeerRun['peer'], label: string, readyMs: number, rssMiB: number, extra: Partial<PeerRun> = {}): PeerRun {
  return {
    peer,
    label,
    readyMs,
    oneNode: idle(rssMiB / 2, 0, 0),
    idle: idle(rssMiB, 5, 10),
    podsCreatedMs: 1000,
    podCreateFailures: 0,
    runningMs: 2000,
    startCpu: { subjectMs: 1500, controlPlaneMs: 3000, harnessMs: 400 },
    idleWithPods: idle(rssMiB * 2, 6, 12),
    podsDeleteSentMs: 1000,
    goneMs: 3000,
    stopCpu: { subjectMs: 900, controlPlaneMs: 2500, harnessMs: 300 },
    rssBytesPerNode: 1024,
    rssBytesPerPod: 2048,
    writes: { start: writes(200, { 'patch pods/status': 200 }, 60_000, peer === 'fleet' ? 30 : 0), stop: writes(100, { 'delete pods': 100 }), idle: writes(120, { 'update leases': 120 }, 120_000), idleWithPods: writes(60, { 'update leases': 60 }) },
    loadAverageBefore: [1, 2, 3],
    loadAverageAfter: [1.5, 2, 3],
    ...extra,
  };
}

describe('kwok benchmark', () => {
  it('sizes: quick and full defaults, and the overrides it reads, refusing what is not a whole number', () => {
    assert.deepEqual([kwokBenchSizes(true, {}).nodes, kwokBenchSizes(true, {}).podsPerNode], [20, 5]);
    assert.deepEqual([kwokBenchSizes(false, {}).nodes, kwokBenchSizes(false, {}).podsPerNode], [1000, 10]);
    assert.equal(kwokBenchSizes(false, { BENCH_KWOK_PODS_PER_NODE: '100' }).podsPerNode, 100);
    // The longer pause before the idle windows only for full runs of 100 pods a node.
    assert.equal(kwokBenchSizes(false, {}).settleMs, 20_000);
    assert.equal(kwokBenchSizes(false, { BENCH_KWOK_PODS_PER_NODE: '100' }).settleMs, LARGE_WAVE_SETTLE_MS);
    assert.equal(kwokBenchSizes(true, { BENCH_KWOK_PODS_PER_NODE: '100' }).settleMs, 5_000);
    // It must outlast the quiet spell the fleet waits before collecting a large heap after a wave.
    assert.ok(LARGE_WAVE_SETTLE_MS > SETTLE_GC_LIMITS.largeQuietWindows * SETTLE_GC_WINDOW_MS);
    assert.equal(kwokBenchSizes(true, { BENCH_KWOK_NODES: '3' }).nodes, 3);
    assert.throws(() => kwokBenchSizes(true, { BENCH_KWOK_NODES: 'many' }), /BENCH_KWOK_NODES: expected a whole number/);
    assert.throws(() => kwokBenchSizes(true, { BENCH_KWOK_IDLE_MS: '0' }), /BENCH_KWOK_IDLE_MS/);
  });

  it('peers: both by default, one chosen, and an unknown one refused', () => {
    assert.deepEqual(kwokBenchPeers({}), ['kwok', 'fleet']);
    assert.deepEqual(kwokBenchPeers({ BENCH_KWOK_PEERS: ' fleet' }), ['fleet']);
    assert.throws(() => kwokBenchPeers({ BENCH_KWOK_PEERS: 'kwok,kind' }), /unknown kind/);
  });

  it('results are written for the default sizes and for 100 pods per node; any other override, node flags included, only prints', () => {
    assert.equal(kwokResultsName(true, kwokBenchSizes(true, {}), {}), 'agent-kwok');
    assert.equal(kwokResultsName(false, kwokBenchSizes(false, {}), {}), 'agent-kwok');
    const hundred = { BENCH_KWOK_PODS_PER_NODE: '100' };
    assert.equal(kwokResultsName(false, kwokBenchSizes(false, hundred), hundred), 'agent-kwok-100-pods-per-node');
    const fewer = { BENCH_KWOK_NODES: '10' };
    assert.equal(kwokResultsName(false, kwokBenchSizes(false, fewer), fewer), undefined);
    assert.equal(kwokResultsName(false, kwokBenchSizes(false, {}), { BENCH_KWOK_PEERS: 'kwok' }), undefined);
    assert.equal(kwokResultsName(false, kwokBenchSizes(false, {}), { BENCH_AGENT_NODE_OPTIONS: '--cpu-prof' }), undefined);
  });

  it("the table puts each fleet's value over kwok's on the same row, and the load averages of each run", () => {
    const result: KwokBenchResult = {
      sizes: kwokBenchSizes(true, {}),
      kwok: { version: 'v0.8.0', stages: ['kustomize/stage/node/fast'], nodeLeaseDurationSeconds: 40, stageFiles: [] },
      runs: [run('kwok', 'kwok', 2000, 80, { nodesCreatedMs: 500 }), run('fleet', 'fleet', 5000, 240)],
    };
    const lines = kwokTable(result).split('\n');
    assert.equal(lines[0], '| measure | kwok | fleet | fleet ÷ kwok |');
    assert.ok(lines.includes('| all 20 Nodes Ready (from the process start) | 2.0 s | 5.0 s | 2.50 |'), lines.join('\n'));
    assert.ok(lines.includes('| RSS, idle, no pods | 80.0 MiB | 240.0 MiB | 3.00 |'), lines.join('\n'));
    assert.ok(lines.includes("| 20 Nodes created by the harness (kwok's) | 0.5 s | – | – |"), lines.join('\n'));
    // The CPU spent in the bursts, each subject's and the control plane's beside it.
    const fleetStart = { subjectMs: 3000, controlPlaneMs: 4500, harnessMs: 400 };
    const withCpu = kwokTable({ ...result, runs: [result.runs[0]!, { ...result.runs[1]!, startCpu: fleetStart }] }).split('\n');
    assert.ok(withCpu.includes('| its CPU, first create → all Running | 1.5 s of CPU | 3.0 s of CPU | 2.00 |'), withCpu.join('\n'));
    assert.ok(withCpu.includes('| control plane CPU, first create → all Running | 3.0 s of CPU | 4.5 s of CPU | 1.50 |'), withCpu.join('\n'));
    assert.ok(withCpu.includes('| control plane CPU, first delete → all gone | 2.5 s of CPU | 2.5 s of CPU | 1.00 |'), withCpu.join('\n'));
    // Per write: the control plane's CPU over the subject's writes and the harness's 100 creates.
    assert.ok(withCpu.includes("| control plane CPU per write (its and the harness's creates), create → all Running | 10.00 ms | 15.00 ms | 1.50 |"), withCpu.join('\n'));
    assert.ok(lines.includes('| fleet | 1.00 2.00 3.00 | 1.50 2.00 3.00 |'), lines.join('\n'));
    // 100 pods (20 × 5): writes per pod and per minute, and each subject's by kind.
    assert.ok(lines.includes('| its API writes per pod, create → all Running | 2.00 | 2.00 | 1.00 |'), lines.join('\n'));
    // The reads of a pod, not among the writes; none from kwok.
    assert.ok(lines.includes('| its reads of a pod (GET) per pod, create → all Running | 0.00 | 0.30 | – |'), lines.join('\n'));
    assert.ok(lines.includes('| its API writes per minute, idle, no pods | 60 | 60 | 1.00 |'), lines.join('\n'));
    assert.ok(lines.includes('| fleet | patch pods/status 2.00 | delete pods 1.00 | update leases 60.00 | update leases 60.00 |'), lines.join('\n'));
  });

  it("reads the fleet's settle GCs from its log and puts them in a table by phase", () => {
    const log = [
      JSON.stringify({ level: 30, time: 1000, msg: 'registered node', node: 'n-1' }),
      JSON.stringify({ level: 30, time: 2000, heapBeforeMiB: 80, heapAfterMiB: 40, pauseMs: 95, msg: 'quiet after busy work: full GC' }),
      'not JSON, and not the line',
      JSON.stringify({ level: 30, time: 9000, heapBeforeMiB: 190, heapAfterMiB: 120, pauseMs: 310, msg: 'quiet after busy work: full GC' }),
      '{"level":30,"time":9500,"msg":"quiet after busy work: fu',
    ].join('\n');
    assert.deepEqual(settleGcsInLog(log), [
      { atMs: 2000, pauseMs: 95 },
      { atMs: 9000, pauseMs: 310 },
    ]);
    const settleGcs = { 'start → idle': { count: 1, maxPauseMs: 95 }, 'create → all Running': { count: 0, maxPauseMs: 0 }, 'idle with pods': { count: 1, maxPauseMs: 310 }, 'delete → all gone': { count: 0, maxPauseMs: 0 } };
    const lines = kwokTable({
      sizes: kwokBenchSizes(true, {}),
      kwok: { version: 'v0.8.0', stages: [], nodeLeaseDurationSeconds: 40, stageFiles: [] },
      runs: [run('kwok', 'kwok', 2000, 80), run('fleet', 'fleet', 5000, 240, { settleGcs })],
    }).split('\n');
    assert.ok(lines.includes('| subject | start → idle | create → all Running | idle with pods | delete → all gone |'), lines.join('\n'));
    assert.ok(lines.includes('| fleet | 1 (95 ms) | 0 | 1 (310 ms) | 0 |'), lines.join('\n'));
  });

  it("counts one subject's writes per phase from an audit log, by when each arrived", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-audit-test-'));
    const file = join(dir, 'audit.log');
    const line = (verb: string, at: string, ua: string, subresource?: string): string =>
      JSON.stringify({ verb, userAgent: ua, objectRef: { resource: 'pods', ...(subresource ? { subresource } : {}) }, requestReceivedTimestamp: at, stageTimestamp: at });
    await writeFile(
      file,
      [
        line('patch', '2026-01-01T00:00:01.000000Z', 'kwok/v0.8.0', 'status'),
        line('patch', '2026-01-01T00:00:02.000000Z', 'kwok/v0.8.0', 'status'),
        line('create', '2026-01-01T00:00:02.500000Z', 'harness'),
        line('get', '2026-01-01T00:00:02.600000Z', 'kwok/v0.8.0'),
        line('delete', '2026-01-01T00:00:05.000000Z', 'kwok/v0.8.0'),
        line('delete', '2026-01-01T00:00:09.000000Z', 'kwok/v0.8.0'),
        '',
      ].join('\n'),
    );
    // The first line as kube-apiserver would have rotated it away, into audit-<time>.log.
    const [first, ...rest] = (await readFile(file, 'utf8')).split('\n');
    await writeFile(join(dir, 'audit-2026-01-01T00-00-01.500.log'), `${first}\n`);
    await writeFile(file, rest.join('\n'));
    await writeFile(join(dir, 'other.log'), `${first}\n`);
    const t = (s: number): number => Date.parse('2026-01-01T00:00:00Z') + s * 1000;
    const [start, stop] = await countWrites(file, [{ name: 'start', fromMs: t(0), toMs: t(3) }, { name: 'stop', fromMs: t(4), toMs: t(6) }], (e) => e.userAgent?.startsWith('kwok') ?? false);
    assert.deepEqual([start!.total, start!.byKind, start!.durationMs, start!.podReads], [2, { 'patch pods/status': 2 }, 3000, 1], 'the read apart from the writes');
    assert.deepEqual([stop!.total, stop!.byKind, stop!.podReads], [1, { 'delete pods': 1 }, 0]);
  });

  it('measures each Lease\'s gap between successful writes, by the phase the later one ended in', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-audit-test-'));
    const file = join(dir, 'audit.log');
    const lease = (verb: string, name: string, at: string, code = 200): string =>
      JSON.stringify({ verb, userAgent: 'fleet', objectRef: { resource: 'leases', namespace: 'kube-node-lease', name }, responseStatus: { code }, requestReceivedTimestamp: at, stageTimestamp: at });
    await writeFile(
      file,
      [
        lease('create', 'a', '2026-01-01T00:00:00.000000Z', 201),
        lease('create', 'b', '2026-01-01T00:00:00.500000Z', 201),
        lease('update', 'a', '2026-01-01T00:00:10.000000Z'),
        lease('update', 'b', '2026-01-01T00:00:10.500000Z', 504),
        lease('update', 'b', '2026-01-01T00:00:22.500000Z'),
        lease('update', 'a', '2026-01-01T00:00:20.000000Z'),
        '',
      ].join('\n'),
    );
    const t = (s: number): number => Date.parse('2026-01-01T00:00:00Z') + s * 1000;
    const [early, late] = await countWrites(file, [{ name: 'early', fromMs: t(0), toMs: t(15) }, { name: 'late', fromMs: t(15), toMs: t(30) }], () => true);
    // b's failed renewal is no renewal: its gap runs from its create to the write that went through.
    assert.deepEqual(early!.leaseGaps, { count: 1, p99Ms: 10_000, maxMs: 10_000 });
    assert.deepEqual(late!.leaseGaps, { count: 2, p99Ms: 22_000, maxMs: 22_000 });
  });
});
