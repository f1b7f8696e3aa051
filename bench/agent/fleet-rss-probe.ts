// Where an idle fleet's RSS goes beside its heap (issue 22): one fleet of N empty nodes
// (bench/agent/fleet-child.ts, the fleet command's GC settings) on a local control plane of its
// own, sampled every few seconds from all Nodes Ready on, without forcing a GC: RSS split into
// anonymous and file pages (/proc/<pid>/status), V8's committed heap by space, what Node counts
// outside it (external), the TLS sockets open, and the rest of the anonymous memory (malloc:
// Node's own, OpenSSL's connections, HTTP/2 sessions, thread stacks).
//
//   node build/bench/agent/fleet-rss-probe.js <nodes> [<seconds>] [<sample ms>]
//
// BENCH_AGENT_NODE_OPTIONS adds node flags to the child; FLEET_CHILD_ENV_* variables are handed
// to the child without the prefix (FLEET_CHILD_ENV_MALLOC_ARENA_MAX=2). BENCH_RSS_PROBE_ALLOCATIONS=1
// then samples what the fleet allocates over 20 s, by function; =promoted only what outlived
// the scavenges (collected by a full GC, or still alive).
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { loadavg } from 'node:os';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { benchNodeOptions, tempDir } from './common.js';
import { until } from './fleet-memory.bench.js';
import { FleetChild } from './fleet-process.js';
import { procCpuMs } from './subjects.js';

interface Now {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  spacesKiB: Record<string, number>;
  tlsSockets: number;
}

const PREFIX = 'rp-';
const nodes = Number(process.argv[2] ?? 100);
const seconds = Number(process.argv[3] ?? 120);
const sampleMs = Number(process.argv[4] ?? 5000);

/** VmRSS, RssAnon and RssFile of a process, in KiB. */
function statusKiB(pid: number): { rss: number; anon: number; file: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
}

const mib = (kib: number): string => (kib / 1024).toFixed(1);

const cluster = await startLocalCluster({ nodes: [] });
try {
  const adminKc = new KubeConfig();
  adminKc.loadFromFile(cluster.adminKubeconfig);
  const admin = adminKc.makeApiClient(CoreV1Api);
  const dir = await tempDir('kp-bench-rss-probe-');
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('FLEET_CHILD_ENV_')) env[k.slice('FLEET_CHILD_ENV_'.length)] = v;
  const script = fileURLToPath(new URL('./fleet-child.js', import.meta.url));
  const t0 = performance.now();
  const child = fork(script, [JSON.stringify({ kubeconfig, nodes, prefix: PREFIX, log: true })], {
    execArgv: ['--expose-gc', ...benchNodeOptions()],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env,
  });
  const fleet = new FleetChild(child);
  await fleet.call('started');
  await until(
    async () => (await admin.listNode()).items.filter((n) => n.metadata?.name?.startsWith(PREFIX) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === nodes,
    `${nodes} Nodes Ready`,
    900_000,
    nodes > 200 ? 2000 : 500,
  );
  console.log(`${nodes} nodes Ready after ${((performance.now() - t0) / 1000).toFixed(1)} s; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log('| s | RSS | anon | file | V8 committed (old / new / code / large) | V8 used | external | anon − V8 committed − external | TLS sockets | CPU % |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const start = performance.now();
  let cpu0 = procCpuMs(child.pid!);
  let w0 = performance.now();
  const sums = { rss: 0, anon: 0, rest: 0, n: 0 };
  while (performance.now() - start < seconds * 1000) {
    await delay(sampleMs);
    const st = statusKiB(child.pid!);
    const m = await fleet.call<Now>('memoryNow');
    const cpu = procCpuMs(child.pid!);
    const cpuPct = ((cpu - cpu0) / (performance.now() - w0)) * 100;
    cpu0 = cpu;
    w0 = performance.now();
    const sp = m.spacesKiB;
    const committed = m.heapTotal / 1024;
    const rest = st.anon - committed - m.external / 1024;
    sums.rss += st.rss;
    sums.anon += st.anon;
    sums.rest += rest;
    sums.n++;
    console.log(
      `| ${((performance.now() - start) / 1000).toFixed(0)} | ${mib(st.rss)} | ${mib(st.anon)} | ${mib(st.file)} | ${mib(committed)} (${mib(sp['old_space'] ?? 0)} / ${mib(sp['new_space'] ?? 0)} / ${mib(sp['code_space'] ?? 0)} / ${mib(sp['large_object_space'] ?? 0)}) | ${mib(m.heapUsed / 1024)} | ${mib(m.external / 1024)} | ${mib(rest)} | ${m.tlsSockets} | ${cpuPct.toFixed(1)} |`,
    );
  }
  const sampled = process.env.BENCH_RSS_PROBE_ALLOCATIONS;
  if (sampled === '1' || sampled === 'promoted') {
    const a = await fleet.call<{ totalBytes: number; top: [string, number][] }>('allocations');
    console.log(`\n${sampled === 'promoted' ? 'promoted' : 'allocated'} over 20 s: ${mib(a.totalBytes / 1024)} MiB (${(a.totalBytes / 20 / nodes).toFixed(0)} bytes a node a second); the largest, bytes a node a second:`);
    for (const [where, bytes] of a.top) console.log(`  ${(bytes / 20 / nodes).toFixed(1)}  ${where}`);
  }
  console.log(`mean over ${sums.n} samples, MiB: RSS ${mib(sums.rss / sums.n)}, anon ${mib(sums.anon / sums.n)}, anon outside V8 and external ${mib(sums.rest / sums.n)}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await fleet.call('stop').catch(() => undefined);
} finally {
  await cluster.dispose();
}
