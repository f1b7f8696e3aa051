// The fleet's GC settings side by side (issue 22: RSS against the live heap, and idle CPU): one
// local control plane; for each state (N empty nodes, then P ordinary pods per node), fleets of
// N nodes (bench/agent/fleet-child.ts, the fleet command's GC settings) started one after the
// other with each setting in turn, rounds alternating, each measured once converged: VmRSS as
// the mean of 1 s samples over an idle window (as kwok.bench.ts reads it), the process's CPU
// over the same window (main thread and the others), then the heap's committed and used sizes
// after a full GC. The pods are created once, through the API with spec.nodeName, and stay
// while the fleets of the second state come and go (each new fleet takes them up as a restarted
// kubelet would).
//
//   npm run build:test && node build/bench/agent/fleet-gc-settings.js [nodes=1000] [podsPerNode=10] [rounds=2]
//
// Settings by name in BENCH_GC_EMPTY and BENCH_GC_PODS (comma-separated, from SETTINGS below;
// an empty list skips that state); BENCH_GC_IDLE_MS (default 40 s), BENCH_GC_SETTLE_MS (10 s).
// Standalone (not part of `npm run bench`); prints one JSON line per run with the load average.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { CoordinationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createApiClients, createConnectionPool } from '../../src/kube/api-clients.js';
import { unlimited } from '../../src/kube/rate-limiter.js';
import { createNamespace, kubeConfigFromFile, pool, tempDir } from './common.js';
import { createPod, until, type Memory } from './fleet-memory.bench.js';
import { FleetChild } from './fleet-process.js';
import { procCpuSplitMs, procRss } from './subjects.js';

/** A setting: node flags the child starts with (a flag node starts with wins over the fleet's own) and environment. */
interface Setting {
  execArgv: string[];
  env?: Record<string, string>;
}

// Measured with the harness at the commit that added it: the fleet then applied its settings
// after its modules had loaded and did not yet compact at each full GC; the names say what each
// setting is in those terms (docs/performance.md, "RSS against the heap: the fleet's GC settings").
const BEFORE = { BENCH_FLEET_COMPACT_EVERY_FULL_GC: '0' };
const SETTINGS: Record<string, Setting> = {
  // V8's own young generation (growing to two 16 MiB semi-spaces), headroom 100 %, scavenges on the main thread: the default before.
  'v8-young': { execArgv: [], env: { ...BEFORE, BENCH_FLEET_SEMI_SPACE_GROWTH_FACTOR: '0' } },
  // The young generation kept at its starting size.
  'growth-1': { execArgv: [], env: BEFORE },
  'growth-1-headroom-50': { execArgv: [], env: { ...BEFORE, BENCH_FLEET_HEAP_GROWING_PERCENT: '50' } },
  // Node's flag wins over the fleet's growth factor (V8 raises a growth factor below 2 given at start to 2).
  'semi-4': { execArgv: ['--max-semi-space-size=4'], env: BEFORE },
  'growth-1-optimize-for-size': { execArgv: ['--optimize-for-size'], env: BEFORE },
  'growth-1-lite': { execArgv: ['--lite-mode'], env: BEFORE },
  'growth-1-pool-1': { execArgv: ['--v8-pool-size=1'], env: BEFORE },
  'growth-1-arena-2': { execArgv: [], env: { ...BEFORE, MALLOC_ARENA_MAX: '2' } },
  // Each full GC compacts the whole old generation: the fleet's default now.
  'growth-1-compact': { execArgv: [] },
};

const PREFIX = 'gc-';
const NAMESPACE = 'fleet-gc';

const nodes = Number(process.argv[2] ?? 1000);
const podsPerNode = Number(process.argv[3] ?? 10);
const rounds = Number(process.argv[4] ?? 2);
const idleMs = Number(process.env.BENCH_GC_IDLE_MS ?? 40_000);
const settleMs = Number(process.env.BENCH_GC_SETTLE_MS ?? 10_000);
const names = (v: string | undefined, dflt: string): string[] => (v ?? dflt).split(',').filter(Boolean);
const emptySettings = names(process.env.BENCH_GC_EMPTY, 'v8-young,growth-1-compact');
const podSettings = names(process.env.BENCH_GC_PODS, 'v8-young,growth-1-compact');
for (const name of [...emptySettings, ...podSettings]) if (SETTINGS[name] === undefined) throw new Error(`unknown setting ${name}: ${Object.keys(SETTINGS).join(', ')}`);

const load = (): string => loadavg().map((l) => l.toFixed(1)).join(' ');
const mib = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;

async function main(): Promise<void> {
  const cluster = await startLocalCluster({ nodes: [], scheduler: false });
  try {
    const kc = kubeConfigFromFile(cluster.adminKubeconfig);
    const admin = kc.makeApiClient(CoreV1Api);
    await createNamespace(admin, NAMESPACE);
    const dir = await tempDir('kp-bench-fleet-gc-');
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
    const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
    const readyNodes = async (): Promise<number> =>
      (await admin.listNode({ resourceVersion: '0' })).items.filter((n) => n.metadata?.name?.startsWith(PREFIX) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    const leases = kc.makeApiClient(CoordinationV1Api);
    /** The fleet's Leases renewed since `since` (Date.now()): every node taken up by the fleet started then. */
    const renewedSince = async (since: number): Promise<number> =>
      (await leases.listNamespacedLease({ namespace: 'kube-node-lease' })).items.filter((l) => l.metadata?.name?.startsWith(PREFIX) && l.spec?.renewTime !== undefined && new Date(l.spec.renewTime).getTime() > since).length;
    const runningPods = async (): Promise<number> => (await admin.listNamespacedPod({ namespace: NAMESPACE, fieldSelector: 'status.phase=Running', resourceVersion: '0' })).items.length;

    /** Starts a fleet with `name`'s setting, waits until converged and quiet, measures it, and stops it unless `keep`. */
    const run = async (name: string, pods: number, keep?: (fleet: FleetChild) => Promise<void>): Promise<void> => {
      const setting = SETTINGS[name]!;
      const load0 = load();
      const t0 = performance.now();
      const forkedAt = Date.now();
      const child = fork(script, [JSON.stringify({ kubeconfig, nodes, prefix: PREFIX, log: true })], {
        execArgv: ['--expose-gc', ...setting.execArgv],
        env: { ...process.env, ...setting.env },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const fleet = new FleetChild(child);
      try {
        await fleet.call('started');
        await until(async () => (await readyNodes()) === nodes && (await renewedSince(forkedAt)) === nodes, `${nodes} Nodes Ready, their Leases renewed`, 600_000, 2000);
        const readyS = (performance.now() - t0) / 1000;
        if (keep !== undefined) return await keep(fleet);
        // Converged: every pod Running and the requests down to the idle pace (a Lease every 10 s a node, a status now and then).
        await until(async () => (await runningPods()) === pods, `${pods} pods Running`, 600_000, 2000);
        await until(
          async () => {
            const r0 = await fleet.call<number>('requests');
            await delay(5000);
            return ((await fleet.call<number>('requests')) - r0) / 5 <= (nodes / 10) * 1.5;
          },
          'the idle request pace',
          600_000,
          0,
        );
        const convergedS = (performance.now() - t0) / 1000;
        await delay(settleMs);
        const pid = child.pid!;
        const cpu0 = procCpuSplitMs(pid);
        const w0 = performance.now();
        const rss: number[] = [];
        const anon: number[] = [];
        while (performance.now() - w0 < idleMs) {
          const r = procRss(pid);
          rss.push(r.rss);
          anon.push(r.anon);
          await delay(1000);
        }
        const cpu1 = procCpuSplitMs(pid);
        const wall = performance.now() - w0;
        const pct = (ms: number): number => Math.round((ms / wall) * 10_000) / 100;
        const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
        // After the window: the heap's spaces after a full GC (what RSS holds beyond the live objects).
        const memory = await fleet.call<Memory>('memory');
        const sp = (s: string, k: 'committedKiB' | 'usedKiB'): number => Math.round((memory.spaces[s]?.[k] ?? 0) / 1024);
        const smaps = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
        console.log(
          JSON.stringify({
            setting: name,
            pods,
            readyS: Math.round(readyS * 10) / 10,
            convergedS: Math.round(convergedS * 10) / 10,
            rssMeanMiB: mib(mean(rss)),
            rssMaxMiB: mib(Math.max(...rss)),
            anonMeanMiB: mib(mean(anon)),
            cpuPercent: pct(cpu1.mainUser + cpu1.mainSystem + cpu1.otherUser + cpu1.otherSystem - (cpu0.mainUser + cpu0.mainSystem + cpu0.otherUser + cpu0.otherSystem)),
            mainPercent: pct(cpu1.mainUser + cpu1.mainSystem - cpu0.mainUser - cpu0.mainSystem),
            otherPercent: pct(cpu1.otherUser + cpu1.otherSystem - cpu0.otherUser - cpu0.otherSystem),
            afterGc: {
              rssMiB: mib(memory.rss),
              heapUsedMiB: mib(memory.heapUsed),
              heapTotalMiB: mib(memory.heapTotal),
              externalMiB: mib(memory.external),
              oldMiB: `${sp('old_space', 'committedKiB')}/${sp('old_space', 'usedKiB')}`,
              newMiB: `${sp('new_space', 'committedKiB')}/${sp('new_space', 'usedKiB')}`,
              codeMiB: `${sp('code_space', 'committedKiB')}/${sp('code_space', 'usedKiB')}`,
              largeMiB: `${sp('large_object_space', 'committedKiB')}/${sp('large_object_space', 'usedKiB')}`,
              privateDirtyMiB: mib(Number(/^Private_Dirty:\s+(\d+)/m.exec(smaps)?.[1] ?? 0) * 1024),
            },
            load: `${load0} → ${load()}`,
          }),
        );
      } finally {
        await fleet.call('stop').catch(() => undefined);
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
    };

    for (let round = 0; round < rounds; round++) for (const name of emptySettings) await run(name, 0);
    if (podSettings.length === 0) return;

    // The pods, created once while a fleet with the fleet's settings runs; every later fleet takes them up.
    await run('growth-1-compact', 0, async () => {
      const api = createApiClients(kc, unlimited, { pool: createConnectionPool(32) }).core;
      const bodies: V1Pod[] = [];
      for (let i = 0; i < podsPerNode; i++)
        for (let n = 0; n < nodes; n++)
          bodies.push({ metadata: { name: `${PREFIX}${n}-p${i}`, namespace: NAMESPACE }, spec: { nodeName: `${PREFIX}${n}`, containers: [{ name: 'main', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } });
      const c0 = performance.now();
      await pool(bodies, 32, (body) => createPod(api, body));
      await until(async () => (await runningPods()) === bodies.length, 'pods Running', 900_000, 2000);
      console.log(JSON.stringify({ created: bodies.length, runningS: Math.round((performance.now() - c0) / 100) / 10, load: load() }));
    });
    for (let round = 0; round < rounds; round++) for (const name of podSettings) await run(name, nodes * podsPerNode);
  } finally {
    await cluster.stop();
  }
}

await main();
