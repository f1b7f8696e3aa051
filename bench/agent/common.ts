// Shared parts of the agent benchmarks (and the reliability tests): a watch-based observer of the
// pods bound to one node, an agent child process that holds only the agent, manifests and
// percentiles. Everything talks to the real local control plane on 127.0.0.1.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';
import { isMirrorPod } from '../../src/pod/classify.js';

export const HASH_ANNOTATION = 'kubernetes.io/config.hash';

export function kubeConfigFromFile(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}


export { podManifestYaml as manifestYaml } from '../../test/helpers/manifests.js';

/** A benchmark knob read from the environment: a whole number of at least `min`, `fallback` when unset. */
/** Node flags for a benchmark's child process (a profiler, say), from BENCH_AGENT_NODE_OPTIONS. */
export function benchNodeOptions(): string[] {
  return (process.env.BENCH_AGENT_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
}

export function envWholeNumber<F extends number | undefined>(env: NodeJS.ProcessEnv, name: string, fallback: F, min = 1): number | F {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name}: expected a whole number ≥ ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

/** A benchmark knob naming some of `choices`, comma-separated; all of them when unset. */
export function envChoices<T extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly T[]): T[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return [...choices];
  const names = raw.split(',').map((c) => c.trim()).filter(Boolean);
  const unknown = names.filter((c) => !(choices as readonly string[]).includes(c));
  if (unknown.length > 0 || names.length === 0) throw new Error(`${name}: expected some of ${choices.join(', ')}, got ${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : JSON.stringify(raw)}`);
  return names as T[];
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function createNamespace(api: CoreV1Api, name: string): Promise<void> {
  await api.createNamespace({ body: { metadata: { name } } });
}

export type PodEvent = { type: string; pod: V1Pod; at: number };
type Waiter = { check: () => boolean; resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/**
 * Lists then watches every pod bound to `node` (fieldSelector spec.nodeName) and keeps the
 * current set by name ("namespace/name"); `at` is performance.now() when the event arrived.
 * Keeps running counts (mirrors, Running mirrors) so that conditions over 10,000 pods are cheap.
 */
export class NodePodObserver {
  readonly pods = new Map<string, V1Pod>();
  mirrors = 0;
  running = 0;
  events = 0;
  #waiters: Waiter[] = [];
  #listeners: Array<(e: PodEvent) => void> = [];
  #abort: AbortController | undefined;
  #stopped = false;

  constructor(
    private readonly kc: KubeConfig,
    private readonly node: string,
  ) {}

  async start(): Promise<void> {
    const api = this.kc.makeApiClient(CoreV1Api);
    const list = await api.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${this.node}` });
    for (const pod of list.items) this.#apply('ADDED', pod);
    await this.#watch(list.metadata?.resourceVersion);
  }

  async #watch(resourceVersion: string | undefined): Promise<void> {
    const watch = new Watch(this.kc);
    let lastRV = resourceVersion;
    this.#abort = await watch.watch(
      '/api/v1/pods',
      { fieldSelector: `spec.nodeName=${this.node}`, allowWatchBookmarks: true, ...(lastRV ? { resourceVersion: lastRV } : {}) },
      (type, obj: V1Pod) => {
        if (obj.metadata?.resourceVersion) lastRV = obj.metadata.resourceVersion;
        if (type === 'BOOKMARK') return;
        this.#apply(type, obj);
      },
      () => {
        // The watch ended (server timeout or outage): re-list and watch again unless stopped.
        if (this.#stopped) return;
        setTimeout(() => void this.#relist(), 200).unref();
      },
    );
  }

  async #relist(): Promise<void> {
    if (this.#stopped) return;
    try {
      const api = this.kc.makeApiClient(CoreV1Api);
      const list = await api.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${this.node}` });
      const seen = new Set<string>();
      for (const pod of list.items) {
        seen.add(key(pod));
        this.#apply('MODIFIED', pod);
      }
      for (const [k, pod] of [...this.pods]) if (!seen.has(k)) this.#apply('DELETED', pod);
      await this.#watch(list.metadata?.resourceVersion);
    } catch {
      if (!this.#stopped) setTimeout(() => void this.#relist(), 500).unref();
    }
  }

  #apply(type: string, pod: V1Pod): void {
    const at = performance.now();
    this.events++;
    const k = key(pod);
    const old = this.pods.get(k);
    if (old) {
      if (isMirrorPod(old)) this.mirrors--;
      if (isMirrorPod(old) && old.status?.phase === 'Running') this.running--;
      this.pods.delete(k);
    }
    if (type !== 'DELETED') {
      this.pods.set(k, pod);
      if (isMirrorPod(pod)) this.mirrors++;
      if (isMirrorPod(pod) && pod.status?.phase === 'Running') this.running++;
    }
    const event = { type, pod, at };
    for (const l of this.#listeners) l(event);
    this.#check();
  }

  onEvent(listener: (e: PodEvent) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  #check(): void {
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.check()) {
        clearTimeout(w.timer);
        w.resolve();
      } else still.push(w);
    }
    this.#waiters = still;
  }

  /** Resolves (at the event that made it true) once `check()` holds; rejects after timeoutMs. */
  until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        check,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters = this.#waiters.filter((x) => x !== w);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${what} (mirrors ${this.mirrors}, running ${this.running})`));
        }, timeoutMs),
      };
      this.#waiters.push(w);
    });
  }

  /** The first event (from now on) matching `match`, with its arrival time. */
  next(match: (e: PodEvent) => boolean, what: string, timeoutMs = 10_000): Promise<PodEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`));
      }, timeoutMs);
      const off = this.onEvent((e) => {
        if (!match(e)) return;
        clearTimeout(timer);
        off();
        resolve(e);
      });
    });
  }

  mirrorPods(): V1Pod[] {
    return [...this.pods.values()].filter(isMirrorPod);
  }

  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('observer stopped'));
    }
    this.#waiters = [];
  }
}

function key(pod: V1Pod): string {
  return `${pod.metadata?.namespace}/${pod.metadata?.name}`;
}

export interface Percentiles {
  samples: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of milliseconds. */
export function percentiles(values: readonly number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
  const round = (n: number): number => Math.round(n * 100) / 100;
  return {
    samples: s.length,
    min: round(s[0] ?? NaN),
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(s[s.length - 1] ?? NaN),
    mean: round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)),
  };
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  });
  await Promise.all(workers);
}

// ---- the agent child process ----

export interface AgentChildOptions {
  kubeconfig: string;
  node: string;
  manifestDir?: string;
  manifestURL?: string;
  manifestURLHeader?: string[];
  /** A KubeletConfiguration file (kubeAPIQPS etc.). */
  configFile?: string;
  /** Every log line (JSON) goes here; nothing is logged without it. */
  logFile?: string;
  logLevel?: string;
  housekeepingIntervalMs?: number;
  /** `--read-only-port` (/pods, /healthz, /metrics on 127.0.0.1); 0, off, by default. */
  readOnlyPort?: number;
  /** `--simulated-lifecycle`: `instant` where a benchmark measures raw speed; the agent's default otherwise. */
  simulatedLifecycle?: 'kubelet' | 'instant';
  /**
   * Record the time of every non-watch HTTPS request the agent sends (QPS adherence; event writes
   * apart, for their own bucket), and count
   * every request by method and response status (requestCounts()).
   */
  recordRequests?: boolean;
  /** With recordRequests: also log every request's method, path and times (requestLog()). */
  recordRequestLog?: boolean;
}

/** How the child is started (not passed to it). */
export interface AgentChildLaunch {
  /** The script to fork; agent-child.js beside this file by default (agent-child-bundle.ts makes another). */
  script?: string;
}

/** One request the agent child sent; times are ms since the time origin (Date.now() scale). */
export interface RequestLogEntry {
  start: number;
  end: number;
  method: string;
  path: string;
  code: number;
}

export interface AgentChildStartup {
  timeOrigin: number;
  nodeTiming: Record<string, unknown>;
  stamps: Record<string, number>;
}

/** Requests sent so far, by method then response status ('<error>' for no response). */
export type RequestCounts = Record<string, Record<string, number>>;

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

type Reply = { id: number; value?: unknown; error?: string };

/** `bench/agent/agent-child.ts` forked with --expose-gc: one process holding only the agent. */
export class AgentChild {
  readonly child: ChildProcess;
  #id = 0;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly exited: Promise<number | null>;

  private constructor(child: ChildProcess) {
    this.child = child;
    child.on('message', (m: Reply) => {
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.value);
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code) => {
        for (const p of this.#pending.values()) p.reject(new Error('agent child exited'));
        this.#pending.clear();
        resolve(code);
      }),
    );
  }

  static async start(options: AgentChildOptions, launch: AgentChildLaunch = {}): Promise<AgentChild> {
    const script = launch.script ?? fileURLToPath(new URL('./agent-child.js', import.meta.url));
    const child = fork(script, [JSON.stringify(options)], { execArgv: ['--expose-gc', ...benchNodeOptions()], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const agent = new AgentChild(child);
    await agent.call('started');
    return agent;
  }

  call<T = unknown>(op: string): Promise<T> {
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, op });
    });
  }

  memory(): Promise<MemorySample> {
    return this.call<MemorySample>('memory');
  }
  /** process.cpuUsage() of the child, µs. */
  cpu(): Promise<{ user: number; system: number }> {
    return this.call('cpu');
  }
  /** performance.timeOrigin-based ms of each recorded request since the last call (events apart). */
  requests(): Promise<number[]> {
    return this.call<number[]>('requests');
  }
  /** The same for the recorded event writes, which have a bucket of their own. */
  eventRequests(): Promise<number[]> {
    return this.call<number[]>('eventRequests');
  }
  /** Cumulative counts since the start (watches included), with recordRequests. */
  requestCounts(): Promise<RequestCounts> {
    return this.call<RequestCounts>('requestCounts');
  }
  /** Every request logged since the last call, with recordRequestLog. */
  requestLog(): Promise<RequestLogEntry[]> {
    return this.call<RequestLogEntry[]>('requestLog');
  }
  /** When the child's start reached each stage: its time origin, Node's own timings (ms after it) and the agent's stages (ms since the epoch). */
  startup(): Promise<AgentChildStartup> {
    return this.call<AgentChildStartup>('startup');
  }
  idle(): Promise<void> {
    return this.call('idle') as Promise<void>;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    await this.call('stop').catch(() => {});
    await this.exited;
  }

  kill(): Promise<number | null> {
    this.child.kill('SIGKILL');
    return this.exited;
  }
}

export async function writeConfigFile(dir: string, fields: Record<string, unknown>): Promise<string> {
  const path = join(dir, 'kubelet-config.json');
  await writeFile(path, JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', ...fields }));
  return path;
}
