// Shared parts of the reliability suite: scale, per-file log capture with the secret scan, an
// in-process agent with a captured logger, and the exact end-state check of mirror pods.
import assert from 'node:assert/strict';
import { createWriteStream, mkdirSync, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { createLogger } from '../../src/logger.js';
import { podManifestYaml, type ManifestOptions } from '../helpers/manifests.js';

export const FULL = process.env.RELIABILITY_SCALE === 'full';
/** `ci` by default; `RELIABILITY_SCALE=full` for the sizes. */
export const SCALE = FULL ? 'full' : 'ci';
export const pick = <T>(ci: T, full: T): T => (FULL ? full : ci);

export const MIRROR = 'kubernetes.io/config.mirror';
export const HASH = 'kubernetes.io/config.hash';

// Compiled to build/test/reliability/; logs go to build/reliability-logs/<file>/.
const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
export const LOG_ROOT = process.env.RELIABILITY_LOG_DIR ?? join(repoRoot, 'build', 'reliability-logs');

/** Every log line of one test file: agents in process write here, child agents' stderr too. */
export class LogCapture {
  readonly dir: string;
  readonly #streams: WriteStream[] = [];

  constructor(name: string) {
    this.dir = join(LOG_ROOT, name);
    mkdirSync(this.dir, { recursive: true });
  }

  file(name: string): string {
    return join(this.dir, `${name}.log`);
  }

  stream(name: string): WriteStream {
    const s = createWriteStream(this.file(name), { flags: 'a' });
    this.#streams.push(s);
    return s;
  }

  /** A debug-level JSON logger (the agent's own, with its redaction) writing to `<name>.log` (and `watch`). */
  logger(name: string, watch?: TerminationWatch): ReturnType<typeof createLogger> {
    const stream = this.stream(name);
    return createLogger({ destination: watch === undefined ? stream : (watch.destination(stream) as unknown as NodeJS.WritableStream), level: 'debug', pretty: false });
  }

  /** Waits until everything written so far is in the files (the streams stay open). */
  async flush(): Promise<void> {
    await Promise.all(this.#streams.map((s) => new Promise<void>((r) => (s.writableEnded ? r() : s.write('', () => r())))));
  }

  /** All lines of all logs of this file. */
  lines(): string[] {
    const out: string[] = [];
    for (const f of readdirSync(this.dir)) {
      if (!f.endsWith('.log')) continue;
      out.push(...readFileSync(join(this.dir, f), 'utf8').split('\n').filter((l) => l !== ''));
    }
    return out;
  }

  /** Parsed JSON lines (non-JSON lines are skipped). */
  records(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [];
    for (const l of this.lines()) {
      try {
        out.push(JSON.parse(l) as Record<string, unknown>);
      } catch {
        // not JSON
      }
    }
    return out;
  }

  /** Asserts that no secret appears in any line; returns the number of lines scanned. */
  async assertNoSecrets(secrets: readonly string[]): Promise<number> {
    await this.flush();
    const lines = this.lines();
    assert.ok(secrets.length > 0 && secrets.every((s) => s.length >= 8), 'there are secrets to look for');
    for (const line of lines) {
      for (const secret of secrets) {
        assert.ok(!line.includes(secret), `a secret (${secret.slice(0, 3)}…) appears in a log line of ${this.dir}`);
      }
    }
    return lines.length;
  }
}

/** Bearer tokens of every kubeconfig given (the control plane authenticates with static tokens). */
export function tokensOf(kubeconfigs: readonly string[]): string[] {
  const tokens: string[] = [];
  for (const path of kubeconfigs) {
    const doc = parseYaml(readFileSync(path, 'utf8')) as { users?: Array<{ user?: { token?: string } }> };
    for (const u of doc.users ?? []) if (u.user?.token) tokens.push(u.user.token);
  }
  return tokens;
}

export async function startAgent(options: {
  kubeconfig: string;
  node: string;
  flags: string[];
  logger: ReturnType<typeof createLogger>;
  housekeepingIntervalMs?: number;
}): Promise<Agent> {
  const { config } = await resolveRunConfig(['--kubeconfig', options.kubeconfig, '--hostname-override', options.node, ...options.flags]);
  const agent = createAgent({
    config,
    logger: options.logger,
    housekeepingIntervalMs: options.housekeepingIntervalMs ?? 500,
    listenPorts: { readOnly: 0, healthz: 0 },
  });
  await agent.start();
  return agent;
}

export async function podsOnNode(api: CoreV1Api, node: string): Promise<V1Pod[]> {
  return (await api.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` })).items;
}

/** What one static pod should look like: its mirror's full name and its container image. */
export interface Expected {
  name: string;
  namespace: string;
  image: string;
}

/**
 * The exact end state: every expected static pod has exactly one mirror (not being deleted)
 * whose config.mirror annotation equals its config.hash and whose image is the manifest's,
 * and no other mirror exists on the node. Returns a description of the differences ('' when
 * exact), so it can be polled.
 */
export function diffMirrors(pods: readonly V1Pod[], expected: readonly Expected[], options: { final?: boolean } = {}): string {
  const problems: string[] = [];
  const mirrors = pods.filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  const byName = new Map<string, V1Pod[]>();
  for (const m of mirrors) {
    const k = `${m.metadata?.namespace}/${m.metadata?.name}`;
    byName.set(k, [...(byName.get(k) ?? []), m]);
  }
  const want = new Set(expected.map((e) => `${e.namespace}/${e.name}`));
  for (const e of expected) {
    const found = byName.get(`${e.namespace}/${e.name}`) ?? [];
    if (found.length !== 1) {
      problems.push(`${e.name}: ${found.length} mirrors`);
      continue;
    }
    const m = found[0]!;
    if (m.metadata?.deletionTimestamp) problems.push(`${e.name}: mirror being deleted`);
    if (m.metadata?.annotations?.[MIRROR] !== m.metadata?.annotations?.[HASH]) problems.push(`${e.name}: mirror hash differs`);
    if (m.spec?.containers?.[0]?.image !== e.image) problems.push(`${e.name}: image ${m.spec?.containers?.[0]?.image} != ${e.image}`);
    if (options.final === true) problems.push(...statusProblems(e, m));
  }
  for (const k of byName.keys()) if (!want.has(k)) problems.push(`${k}: orphan mirror`);
  return problems.slice(0, 10).join('; ') + (problems.length > 10 ? ` (+${problems.length - 10} more)` : '');
}

/**
 * The final status of a running static pod's mirror: Running and Ready, its one container
 * running and ready with the manifest's image, and no sign of a stop (no container terminated).
 */
function statusProblems(e: Expected, m: V1Pod): string[] {
  const problems: string[] = [];
  const s = m.status;
  if (s?.phase !== 'Running') problems.push(`${e.name}: phase ${s?.phase}`);
  if (s?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True') problems.push(`${e.name}: not Ready`);
  const c = s?.containerStatuses?.[0];
  if (c?.state?.running === undefined || c.ready !== true) problems.push(`${e.name}: container not running and ready`);
  if (c !== undefined && c.image !== e.image) problems.push(`${e.name}: status image ${c.image} != ${e.image}`);
  return problems;
}

/**
 * Polls until the mirrors on `node` are exactly `expected` (with `final`, each showing the
 * final status of a running pod too); returns the ms it took.
 */
export async function convergeExactly(api: CoreV1Api, node: string, expected: readonly Expected[], timeoutMs: number, options: { final?: boolean } = {}): Promise<number> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      last = diffMirrors(await podsOnNode(api, node), expected, options);
      if (last === '') return performance.now() - started;
    } catch (err) {
      last = `list failed: ${(err as Error).message}`;
    }
    if (Date.now() > deadline) throw new Error(`mirrors on ${node} not exact after ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export { podManifestYaml as manifest } from '../helpers/manifests.js';

/** Clean-ups run, in order, once the file's tests are done (agents, servers). */
export function stopsAfterAll(): Array<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  after(async () => {
    for (const stop of stops) await stop();
  });
  return stops;
}

/**
 * A static pod manifest directory and the image each of its pods should run: what the node's
 * mirrors must end up as. Pods are named `<prefix>-<n>`, n counting every pod ever created.
 */
export class ManifestDir {
  readonly images = new Map<string, string>();
  /** Pods created so far (the next one's number). */
  created = 0;

  constructor(
    readonly dir: string,
    readonly namespace: string,
    readonly prefix: string,
    /** What every manifest adds (a grace period, a simulated stop time). */
    readonly podOptions: ManifestOptions = {},
  ) {}

  async write(name: string, image: string): Promise<void> {
    this.images.set(name, image);
    await writeFile(join(this.dir, `${name}.yaml`), podManifestYaml(name, this.namespace, image, this.podOptions));
  }

  /** Removes `name`'s manifest: its static pod goes away. */
  async remove(name: string): Promise<void> {
    this.images.delete(name);
    await rm(join(this.dir, `${name}.yaml`));
  }

  /** Writes `count` new pods running `image`. */
  async add(count: number, image = 'nginx:1.27'): Promise<void> {
    for (let i = 0; i < count; i++) await this.write(`${this.prefix}-${this.created++}`, image);
  }

  /** What happens while the agent cannot react: `count` random edits to `image`, `count` removals, `count` new pods. */
  async change(rnd: { int(n: number): number }, count: number, image: string): Promise<void> {
    const names = [...this.images.keys()];
    for (let i = 0; i < count; i++) await this.write(names[rnd.int(names.length)]!, image);
    for (let i = 0; i < count; i++) {
      const name = [...this.images.keys()][rnd.int(this.images.size)]!;
      this.images.delete(name);
      await rm(join(this.dir, `${name}.yaml`));
    }
    await this.add(count);
  }

  /** The mirrors `node` must end up with. */
  expected(node: string): Expected[] {
    return [...this.images].map(([name, image]) => ({ name: `${name}-${node}`, namespace: this.namespace, image }));
  }
}

/** A small seeded PRNG (mulberry32), so that a failing run can be replayed with its seed. */
export function prng(seed: number): { next(): number; int(n: number): number; seed: number } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), seed };
}

export function seedFromEnv(): number {
  const s = Number(process.env.RELIABILITY_SEED);
  return Number.isFinite(s) && s > 0 ? s : Math.floor(Math.random() * 2 ** 31) + 1;
}

/**
 * The pod terminations an agent's log (its JSON lines) shows begun and not yet finished, so
 * that a test can kill the agent or stop the API server exactly while pods are stopping.
 */
export class TerminationWatch {
  readonly #begun = new Set<string>();
  readonly #finished = new Set<string>();
  #partial = '';

  /** Pod UIDs whose termination has begun. */
  get begun(): number {
    return this.#begun.size;
  }

  /** Terminations begun and not finished. */
  get inFlight(): number {
    let n = 0;
    for (const uid of this.#begun) if (!this.#finished.has(uid)) n++;
    return n;
  }

  /** Feeds a chunk of the log (whole lines or not). */
  feed(chunk: string): void {
    const lines = (this.#partial + chunk).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) {
      let record: { msg?: unknown; podUID?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        continue;
      }
      if (typeof record.podUID !== 'string') continue;
      if (record.msg === 'terminating pod') this.#begun.add(record.podUID);
      if (record.msg === 'pod terminated') this.#finished.add(record.podUID);
    }
  }

  /** A logger destination that feeds this watch and writes on to `out`. */
  destination(out: { write(chunk: string): unknown }): { write(chunk: string): boolean } {
    return {
      write: (chunk) => {
        this.feed(chunk);
        out.write(chunk);
        return true;
      },
    };
  }
}
