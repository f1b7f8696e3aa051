// The simulated usage behind /stats/summary and /metrics/resource: a share of the requests
// with a noise fixed per container, CPU as a counter on the agent's clock, the usage
// annotation, the scenarios' override hook, and only running containers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container, V1ContainerState, V1PodStatus } from '@kubernetes/client-node';
import { createResourceUsage, DEFAULT_USAGE_SHARE, IDLE_USAGE, SYSTEM_USAGE, USAGE_NOISE, type UsageOverride } from '../../../src/runtime/resource-usage.js';
import { usagePlan } from '../../../src/runtime/usage-annotation.js';
import { SIMULATION_ANNOTATIONS } from '../../../src/runtime/simulation-annotations.js';
import { parseScenarios } from '../../../src/scenario/parse-scenarios.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import type { Pod } from '../../../src/pod/types.js';
import type { Logger } from '../../../src/logger.js';

const MI = 2 ** 20;
const START = Date.parse('2026-01-01T00:00:00Z');

function container(name: string, requests?: Record<string, string>, limits?: Record<string, string>): V1Container {
  return { name, image: 'nginx', ...(requests || limits ? { resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } } : {}) };
}

function pod(uid: string, containers: V1Container[], annotations?: Record<string, string>, initContainers?: V1Container[]): Pod {
  return {
    metadata: { name: `p-${uid}`, namespace: 'default', uid, ...(annotations ? { annotations } : {}) },
    spec: { containers, ...(initContainers ? { initContainers } : {}) },
  };
}

/** Every container of the pod running since `startedAt` (ms), unless listed in `notRunning`. */
function running(p: Pod, startedAt: number, notRunning: Record<string, V1ContainerState> = {}): V1PodStatus {
  const statuses = (cs: V1Container[] | undefined) =>
    (cs ?? []).map((c) => ({ name: c.name, image: c.image ?? '', imageID: '', ready: true, restartCount: 0, state: notRunning[c.name] ?? { running: { startedAt: new Date(startedAt) } } }));
  return { phase: 'Running', startTime: new Date(startedAt), containerStatuses: statuses(p.spec?.containers), initContainerStatuses: statuses(p.spec?.initContainers) };
}

function recordingLogger(): Logger & { lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> } {
  const lines: Array<{ obj: Record<string, unknown>; msg: string | undefined }> = [];
  const keep = (obj: object, msg?: string) => lines.push({ obj: obj as Record<string, unknown>, msg });
  return { lines, debug: () => {}, info: () => {}, error: keep, warn: keep };
}

describe('the default usage: a share of the requests, with a noise fixed per container', () => {
  const web = pod('uid-1', [container('main', { cpu: '200m', memory: '100Mi' }), container('side', { cpu: '1', memory: '1Gi' })]);

  it('is within the noise of the share, the same in every run, and differs between containers', () => {
    const a = createResourceUsage({ clock: new FakeClock(START) });
    const b = createResourceUsage({ clock: new FakeClock(START + 3_600_000) });
    const main = a.rateOf(web, web.spec!.containers[0]!);
    assert.deepEqual(b.rateOf(web, web.spec!.containers[0]!), main, 'a second model (a second run) gives the same numbers');
    const near = (value: number, base: number) => Math.abs(value / (base * DEFAULT_USAGE_SHARE) - 1) <= USAGE_NOISE;
    assert.ok(near(main.cpuCores, 0.2), `cpu ${main.cpuCores}`);
    assert.ok(near(main.memoryBytes, 100 * MI), `memory ${main.memoryBytes}`);
    assert.notEqual(main.cpuCores, 0.2 * DEFAULT_USAGE_SHARE, 'the noise moves it off the exact share');
    const other = pod('uid-2', web.spec!.containers);
    assert.notDeepEqual(a.rateOf(other, other.spec!.containers[0]!), main, 'another pod UID, another noise');
  });

  it('a container that requests nothing uses the idle amount; one at its limit is held there', () => {
    const usage = createResourceUsage({ clock: new FakeClock(START) });
    const p = pod('uid-3', [container('idle'), container('capped', { cpu: '2', memory: '2Gi' }, { cpu: '500m', memory: '256Mi' })]);
    assert.deepEqual(usage.rateOf(p, p.spec!.containers[0]!), IDLE_USAGE);
    assert.deepEqual(usage.rateOf(p, p.spec!.containers[1]!), { cpuCores: 0.5, memoryBytes: 256 * MI });
  });
});

describe('CPU is a counter on the agent clock', () => {
  it('starts at the rate times the time since the container started and grows at the rate', async () => {
    const clock = new FakeClock(START);
    const usage = createResourceUsage({ clock });
    const p = pod('uid-4', [container('main', { cpu: '400m', memory: '64Mi' })], { [SIMULATION_ANNOTATIONS.usage]: 'main=250m/32Mi' });
    const status = running(p, START - 10_000);
    const first = usage.measure([{ pod: p, status }], {});
    assert.equal(first.pods.length, 1);
    const c1 = first.pods[0]!.containers[0]!;
    assert.equal(c1.cpuNanoCores, 250_000_000);
    assert.equal(c1.cpuCoreNanoSeconds, 2_500_000_000, '0.25 cores for 10 s');
    assert.equal(c1.workingSetBytes, 32 * MI);
    assert.deepEqual(c1.startTime, new Date(START - 10_000));
    await clock.advance(60_000);
    const c2 = usage.measure([{ pod: p, status }], {}).pods[0]!.containers[0]!;
    assert.equal(c2.cpuCoreNanoSeconds, 17_500_000_000, '0.25 cores for 70 s');
    assert.equal(c2.workingSetBytes, 32 * MI, 'the working set is a level, not a counter');
  });

  it('a rate that changes bends the counter without taking anything back; a restart starts it again, the pod counter goes on', async () => {
    const clock = new FakeClock(START);
    let cores = 1;
    const usage = createResourceUsage({ clock, override: () => ({ cpuCores: cores, memoryBytes: MI }) });
    const p = pod('uid-5', [container('main')]);
    const status = running(p, START);
    await clock.advance(10_000);
    assert.equal(usage.measure([{ pod: p, status }], {}).pods[0]!.containers[0]!.cpuCoreNanoSeconds, 10e9);
    cores = 0.1;
    await clock.advance(10_000);
    // The 10 s since the last reading at the rate then (1 core); the new rate from now on.
    const mid = usage.measure([{ pod: p, status }], {}).pods[0]!;
    assert.equal(mid.containers[0]!.cpuCoreNanoSeconds, 20e9);
    await clock.advance(10_000);
    assert.equal(usage.measure([{ pod: p, status }], {}).pods[0]!.containers[0]!.cpuCoreNanoSeconds, 21e9);
    // The container's new instance; the pod's start is unchanged.
    const restarted = { ...running(p, START + 30_000), startTime: new Date(START) };
    await clock.advance(10_000);
    const after = usage.measure([{ pod: p, status: restarted }], {}).pods[0]!;
    assert.equal(after.containers[0]!.cpuCoreNanoSeconds, 1e9, 'the new instance: 0.1 core for 10 s');
    assert.equal(after.cpuCoreNanoSeconds, 22e9, 'the pod: 21 s before, 1 s since');
  });

  it('the node is its pods plus the system share, its counter never going back when a pod goes', async () => {
    const clock = new FakeClock(START);
    const usage = createResourceUsage({ clock, override: () => ({ cpuCores: 0.5, memoryBytes: 100 * MI }) });
    const a = pod('uid-a', [container('main')]);
    const b = pod('uid-b', [container('main'), container('side')]);
    await clock.advance(20_000);
    const both = usage.measure([{ pod: a, status: running(a, START) }, { pod: b, status: running(b, START + 10_000) }], { memoryBytes: 8 * 2 ** 30 });
    assert.equal(both.podsTotal.cpuNanoCores, 1.5e9);
    assert.equal(both.podsTotal.cpuCoreNanoSeconds, 10e9 + 5e9 + 5e9);
    assert.equal(both.podsTotal.workingSetBytes, 300 * MI);
    assert.deepEqual(both.system, { cpuNanoCores: SYSTEM_USAGE.cpuCores * 1e9, cpuCoreNanoSeconds: SYSTEM_USAGE.cpuCores * 20e9, workingSetBytes: SYSTEM_USAGE.memoryBytes });
    assert.equal(both.cpuNanoCores, 1.5e9 + SYSTEM_USAGE.cpuCores * 1e9);
    assert.equal(both.cpuCoreNanoSeconds, 20e9 + SYSTEM_USAGE.cpuCores * 20e9);
    assert.equal(both.workingSetBytes, 300 * MI + SYSTEM_USAGE.memoryBytes);
    assert.equal(both.memoryCapacityBytes, 8 * 2 ** 30);
    assert.deepEqual(both.startTime, new Date(START));
    await clock.advance(10_000);
    const onlyA = usage.measure([{ pod: a, status: running(a, START) }], {});
    assert.deepEqual(onlyA.pods.map((p) => p.uid), ['uid-a']);
    assert.equal(onlyA.podsTotal.cpuCoreNanoSeconds, 20e9 + 15e9, 'the 10 s since at the 1.5 cores then');
    assert.equal(onlyA.podsTotal.cpuNanoCores, 0.5e9);
  });
});

describe('only running containers report', () => {
  it('a waiting or terminated container is left out, a running sidecar is in, a pod with none running is not listed', () => {
    const usage = createResourceUsage({ clock: new FakeClock(START) });
    const p = pod('uid-6', [container('main'), container('crashing')], undefined, [container('setup'), { ...container('proxy'), restartPolicy: 'Always' }]);
    const status = running(p, START, {
      crashing: { waiting: { reason: 'CrashLoopBackOff' } },
      setup: { terminated: { exitCode: 0, reason: 'Completed' } },
    });
    const measured = usage.measure([{ pod: p, status }], {});
    assert.deepEqual(measured.pods[0]!.containers.map((c) => c.name), ['proxy', 'main']);
    const pending = pod('uid-7', [container('main')]);
    const none = usage.measure([{ pod: pending, status: { phase: 'Pending' } }, { pod: p, status: undefined }], {});
    assert.deepEqual(none.pods, []);
  });
});

describe('the usage annotation', () => {
  it('sets amounts or shares of the request per container, `*` for the others, either side optional', () => {
    const usage = createResourceUsage({ clock: new FakeClock(START) });
    const p = pod('uid-8', [container('main', { cpu: '1', memory: '1Gi' }), container('side', { cpu: '200m', memory: '200Mi' }), container('log', { cpu: '100m', memory: '10Mi' })], {
      [SIMULATION_ANNOTATIONS.usage]: 'main=1500m/512Mi, side=80%/, *=/50%',
    });
    const [main, side, log] = p.spec!.containers;
    assert.deepEqual(usage.rateOf(p, main!), { cpuCores: 1.5, memoryBytes: 512 * MI });
    const s = usage.rateOf(p, side!);
    assert.equal(s.cpuCores, 0.8 * 0.2);
    assert.ok(Math.abs(s.memoryBytes / (200 * MI * DEFAULT_USAGE_SHARE) - 1) <= USAGE_NOISE, 'memory left to the default');
    assert.equal(usage.rateOf(p, log!).memoryBytes, 5 * MI);
  });

  it('a malformed entry is named once in a clear message, its container keeps the default, the others apply', () => {
    const logger = recordingLogger();
    const usage = createResourceUsage({ clock: new FakeClock(START), logger });
    const p = pod('uid-9', [container('main', { cpu: '100m', memory: '100Mi' }), container('side')], {
      [SIMULATION_ANNOTATIONS.usage]: 'main=lots/1Gi,side=10m/16Mi,broken',
    });
    const status = running(p, START);
    const measured = usage.measure([{ pod: p, status }], {});
    usage.measure([{ pod: p, status }], {});
    assert.equal(logger.lines.length, 1, 'told once, not at every scrape');
    const err = logger.lines[0]!.obj['err'] as { code: string; message: string };
    assert.equal(err.code, 'KP_ERR_SIMULATION_ANNOTATION');
    assert.equal(
      err.message,
      'pod "p-uid-9_default(uid-9)": annotation "simulation.kubelet-pods.io/usage": entries ignored (the default applies): "main=lots/1Gi": cpu "lots" is not a quantity; "broken": expected <container>=<cpu>/<memory>',
    );
    const [main, side] = measured.pods[0]!.containers;
    assert.ok(Math.abs(main!.cpuNanoCores / (0.1e9 * DEFAULT_USAGE_SHARE) - 1) <= USAGE_NOISE, 'main: the default');
    assert.equal(side!.cpuNanoCores, 10_000_000);
    assert.equal(side!.workingSetBytes, 16 * MI);
  });

  it('reads percentages and quantities, and refuses what is neither', () => {
    const plan = usagePlan(pod('u', [], { [SIMULATION_ANNOTATIONS.usage]: 'a=50%/1Gi,b=/,c=-1/,d=%/,e=1/2/3' }));
    assert.deepEqual([...plan.entries], [['a', { cpu: { ofRequest: 0.5 }, memory: { amount: 2 ** 30 } }], ['b', {}]]);
    assert.deepEqual(plan.problems, ['"c=-1/": cpu "-1" is not a quantity', '"d=%/": cpu "%" is not a percentage', '"e=1/2/3": expected <container>=<cpu>/<memory>']);
    assert.deepEqual(usagePlan(pod('u', [])), { entries: new Map(), problems: [] });
  });
});

describe('the override hook (scenarios)', () => {
  it('answers first, is checked against the limit, and leaves a container it returns undefined for to the annotation', () => {
    const override: UsageOverride = (p, c) => (c.name === 'main' ? { cpuCores: 3, memoryBytes: 300 * MI } : undefined);
    const usage = createResourceUsage({ clock: new FakeClock(START), override });
    const p = pod('uid-10', [container('main', undefined, { cpu: '2' }), container('side')], { [SIMULATION_ANNOTATIONS.usage]: '*=20m/20Mi' });
    assert.deepEqual(usage.rateOf(p, p.spec!.containers[0]!), { cpuCores: 2, memoryBytes: 300 * MI });
    assert.deepEqual(usage.rateOf(p, p.spec!.containers[1]!), { cpuCores: 0.02, memoryBytes: 20 * MI });
  });
});

describe('usage scenarios (a workload by rule)', () => {
  const scenarios = (() => {
    const problems: string[] = [];
    const list = parseScenarios(
      [
        { name: 'hot-web', match: { labels: { app: 'web' } }, usage: { cpu: '90%', memory: '200Mi', container: 'main' } },
        { name: 'half-of-batch', match: { namespace: 'batch' }, fraction: 0.5, usage: { cpu: '1500m' } },
      ],
      'scenarios',
      problems,
    );
    assert.deepEqual(problems, []);
    return list;
  })();

  it('apply to the containers they concern, a share of the request or an amount, the rest at the default', () => {
    const usage = createResourceUsage({ clock: new FakeClock(START), scenarios });
    const p: Pod = { ...pod('uid-20', [container('main', { cpu: '1', memory: '1Gi' }), container('side', { cpu: '100m' })]), metadata: { name: 'web-1', namespace: 'default', uid: 'uid-20', labels: { app: 'web' } } };
    assert.deepEqual(usage.rateOf(p, p.spec!.containers[0]!), { cpuCores: 0.9, memoryBytes: 200 * MI });
    const side = usage.rateOf(p, p.spec!.containers[1]!);
    assert.ok(Math.abs(side.cpuCores - 0.1 * DEFAULT_USAGE_SHARE) <= 0.1 * DEFAULT_USAGE_SHARE * USAGE_NOISE + 1e-9, `side uses ${side.cpuCores} cores`);
  });

  it('pick their fraction of the pods by UID, the same pods in every run', () => {
    const batch = (uid: string): Pod => ({ ...pod(uid, [container('job', { cpu: '2' })]), metadata: { name: `job-${uid}`, namespace: 'batch', uid } });
    const hot = (u: ReturnType<typeof createResourceUsage>) => Array.from({ length: 400 }, (_, i) => batch(`uid-b${i}`)).filter((p) => u.rateOf(p, p.spec!.containers[0]!).cpuCores === 1.5).map((p) => p.metadata!.uid);
    const first = hot(createResourceUsage({ clock: new FakeClock(START), scenarios }));
    assert.deepEqual(hot(createResourceUsage({ clock: new FakeClock(START), scenarios })), first);
    assert.ok(first.length > 150 && first.length < 250, `${first.length} of 400 pods picked at a fraction of 0.5`);
  });

  it("yield to the pod's own annotation and to the override hook", () => {
    const labelled = (annotations?: Record<string, string>): Pod => ({ ...pod('uid-21', [container('main', { cpu: '1' })], annotations), metadata: { name: 'web-2', namespace: 'default', uid: 'uid-21', labels: { app: 'web' }, ...(annotations ? { annotations } : {}) } });
    const annotated = labelled({ [SIMULATION_ANNOTATIONS.usage]: 'main=10m/' });
    assert.equal(createResourceUsage({ clock: new FakeClock(START), scenarios }).rateOf(annotated, annotated.spec!.containers[0]!).cpuCores, 0.01);
    const plain = labelled();
    const override: UsageOverride = () => ({ cpuCores: 0.3, memoryBytes: MI });
    assert.equal(createResourceUsage({ clock: new FakeClock(START), scenarios, override }).rateOf(plain, plain.spec!.containers[0]!).cpuCores, 0.3);
  });
});
