// The two agents the side-by-side benchmark compares, behind one interface: the real kubelet
// (tools/hollow-kubelet: v1.34.4 with kubemark's fake runtime, started with startHollowKubelet)
// and ours (bench/agent/agent-child.ts). Both run as their own process, so RSS and CPU are read
// the same way for both, from /proc/<pid>; both count every request they send, by method and
// response status (the kubelet's client-go rest_client_requests_total on its read-only port, our
// child's wrapper around https.request).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalCluster } from '../../src/cluster/local-cluster.js';
import { startHollowKubelet } from '../../test/helpers/hollow-kubelet.js';
import { freePort, readPods } from '../../test/helpers/node-endpoints.js';
import { bundledAgentChild } from './agent-child-bundle.js';
import { AgentChild, writeConfigFile, type RequestCounts } from './common.js';

export type SubjectKind = 'kubelet' | 'ours';
export const SUBJECT_KINDS: readonly SubjectKind[] = ['kubelet', 'ours'];

export interface Subject {
  readonly kind: SubjectKind;
  readonly node: string;
  /** The process whose RSS and CPU are read. */
  readonly pid: number;
  /** Every request sent since the process started, by method then status code. */
  requestCounts(): Promise<RequestCounts>;
  /** The pods the process itself reports Running (its read-only port's /pods). */
  podsRunning(): Promise<number>;
  /** Our agent child (request log, idle), absent for the kubelet. */
  readonly agent?: AgentChild;
  /** The kubelet's log so far (for a failed run); '' for ours. */
  logs(): Promise<string>;
  stop(): Promise<void>;
}

export interface SubjectOptions {
  cluster: LocalCluster;
  kind: SubjectKind;
  node: string;
  manifestDir: string;
  /** A directory of this run (our configuration file goes there). */
  workDir: string;
  /** kubeAPIQPS / kubeAPIBurst, the same on both. */
  qps: number;
  burst: number;
  /** maxPods, the same on both (the kubelet's 110 would reject the 1,000-pod cells). */
  maxPods: number;
  /** Ours only: log every request (method, path, times) for analysis. */
  recordRequestLog?: boolean;
  /**
   * The kubelet's root directory, kept when it stops, so that a second start on it is a
   * restart (a temporary one, removed at stop, by default). Ours keeps nothing on disk.
   */
  rootDir?: string;
}

/** How many pods a node's /pods shows in phase Running. */
async function runningOn(port: number): Promise<number> {
  let n = 0;
  for (const pod of (await readPods<{ metadata?: { name?: string }; status?: { phase?: string } }>(port)).values()) if (pod.status?.phase === 'Running') n++;
  return n;
}

export async function startSubject(o: SubjectOptions): Promise<Subject> {
  return o.kind === 'kubelet' ? startKubelet(o) : startOurs(o);
}

async function startKubelet(o: SubjectOptions): Promise<Subject> {
  const kubelet = await startHollowKubelet({
    cluster: o.cluster,
    nodeName: o.node,
    staticPodPath: o.manifestDir,
    kubeAPIQPS: o.qps,
    kubeAPIBurst: o.burst,
    maxPods: o.maxPods,
    ...(o.rootDir !== undefined ? { rootDir: o.rootDir } : {}),
  });
  let pid: number;
  try {
    pid = childPidWithArg(`--node-name=${o.node}`);
  } catch (err) {
    await kubelet.stop();
    throw err;
  }
  return {
    kind: 'kubelet',
    node: o.node,
    pid,
    requestCounts: async () => parseRestClientRequests(await (await fetch(`http://127.0.0.1:${kubelet.ports.readOnly}/metrics`)).text()),
    podsRunning: () => runningOn(kubelet.ports.readOnly),
    logs: () => kubelet.logs(),
    stop: () => kubelet.stop(),
  };
}

async function startOurs(o: SubjectOptions): Promise<Subject> {
  // maxPods is ignored (and reported as such) by an agent that does not honour it yet.
  const configFile = await writeConfigFile(o.workDir, { kubeAPIQPS: o.qps, kubeAPIBurst: o.burst, maxPods: o.maxPods });
  const readOnlyPort = await freePort();
  // Bundled as the package's command is (BENCH_SBS_BUNDLED picks another way: agent-child-bundle.ts).
  const script = await bundledAgentChild();
  const agent = await AgentChild.start({
    readOnlyPort,
    kubeconfig: o.cluster.nodeKubeconfigs[o.node]!,
    node: o.node,
    manifestDir: o.manifestDir,
    configFile,
    // Raw speed: pods are not terminated gracefully (the hollow kubelet's fake runtime stops
    // containers at once too).
    simulatedLifecycle: 'instant',
    recordRequests: true,
    ...(o.recordRequestLog ? { recordRequestLog: true } : {}),
    ...(process.env.BENCH_AGENT_LOG ? { logFile: process.env.BENCH_AGENT_LOG, logLevel: 'debug' } : {}),
  }, script === undefined ? {} : { script });
  return {
    kind: 'ours',
    node: o.node,
    pid: agent.child.pid!,
    agent,
    requestCounts: () => agent.requestCounts(),
    podsRunning: () => runningOn(readOnlyPort),
    logs: () => Promise.resolve(''),
    stop: () => agent.stop(),
  };
}

/** client-go's `rest_client_requests_total{code,host,method}` summed over hosts. */
export function parseRestClientRequests(metrics: string): RequestCounts {
  const counts: RequestCounts = {};
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('rest_client_requests_total{')) continue;
    const labels = line.slice(line.indexOf('{') + 1, line.lastIndexOf('}'));
    const code = /(?:^|,)code="([^"]*)"/.exec(labels)?.[1] ?? '';
    const method = /(?:^|,)method="([^"]*)"/.exec(labels)?.[1] ?? '';
    const value = Number(line.slice(line.lastIndexOf('}') + 1).trim());
    const byCode = (counts[method] ??= {});
    byCode[code] = (byCode[code] ?? 0) + value;
  }
  return counts;
}

export const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** after − before, method by method and code by code (zeros left out). */
export function countsDelta(after: RequestCounts, before: RequestCounts): RequestCounts {
  const out: RequestCounts = {};
  for (const [method, byCode] of Object.entries(after)) {
    for (const [code, n] of Object.entries(byCode)) {
      const d = n - (before[method]?.[code] ?? 0);
      if (d !== 0) (out[method] ??= {})[code] = d;
    }
  }
  return out;
}

/** Requests with a write method (POST, PUT, PATCH, DELETE), whatever their answer. */
export function writeCount(counts: RequestCounts): number {
  let n = 0;
  for (const m of WRITE_METHODS) for (const v of Object.values(counts[m] ?? {})) n += v;
  return n;
}

export function requestCount(counts: RequestCounts, method: string, code?: string): number {
  const byCode = counts[method] ?? {};
  return code === undefined ? Object.values(byCode).reduce((a, b) => a + b, 0) : (byCode[code] ?? 0);
}

// ---- /proc readings, the same for both processes ----

let clockTicks: number | undefined;
/** USER_HZ, the unit of utime and stime in /proc/<pid>/stat. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number, tid?: string): string[] {
  const text = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU time (user + system, every thread) the process has used, in ms. */
export function procCpuMs(pid: number): number {
  const f = statFields(pid);
  // After the command: state is field 3 of the file, so utime (14) and stime (15) are at 11, 12.
  return ((Number(f[11]) + Number(f[12])) / ticksPerSecond()) * 1000;
}

/** CPU time of a process split by thread and mode, in ms: its main thread (tid = pid) and all others. */
export interface ProcCpuSplit {
  mainUser: number;
  mainSystem: number;
  otherUser: number;
  otherSystem: number;
}

/** CPU time per thread group and mode (threads that ended are not counted; node's do not end). */
export function procCpuSplitMs(pid: number): ProcCpuSplit {
  const split: ProcCpuSplit = { mainUser: 0, mainSystem: 0, otherUser: 0, otherSystem: 0 };
  const ms = (ticks: string | undefined): number => (Number(ticks) / ticksPerSecond()) * 1000;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let f: string[];
    try {
      f = statFields(pid, tid);
    } catch {
      continue; // the thread ended meanwhile
    }
    if (Number(tid) === pid) {
      split.mainUser += ms(f[11]);
      split.mainSystem += ms(f[12]);
    } else {
      split.otherUser += ms(f[11]);
      split.otherSystem += ms(f[12]);
    }
  }
  return split;
}

export interface ProcRss {
  /** VmRSS, bytes. */
  rss: number;
  /** RssAnon: private memory (heaps, stacks). */
  anon: number;
  /** RssFile: pages of mapped files, mostly the program's own code, shared and reclaimable. */
  file: number;
}

/** VmRSS of the process and its anonymous and file-backed parts, in bytes. */
export function procRss(pid: number): ProcRss {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!m) throw new Error(`no ${name} in /proc/${pid}/status`);
    return Number(m[1]) * 1024;
  };
  return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') };
}

/** The children of `parent`, each with its command line's arguments. */
export function childProcesses(parent: number): Array<{ pid: number; argv: string[] }> {
  const found: Array<{ pid: number; argv: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (Number(statFields(Number(entry))[1]) !== parent) continue;
      found.push({ pid: Number(entry), argv: readFileSync(join('/proc', entry, 'cmdline'), 'utf8').split('\0') });
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** The child of this process whose command line holds `arg` exactly. */
export function childPidWithArg(arg: string): number {
  const found = childProcesses(process.pid).filter((c) => c.argv.includes(arg));
  if (found.length !== 1) throw new Error(`expected one child process with ${arg}, found ${found.length}`);
  return found[0]!.pid;
}
