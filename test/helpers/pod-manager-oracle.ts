// The kubelet's own code as a test oracle: builds bench/go (k8s.io/kubernetes v1.34.4
// pkg/kubelet/pod and the API's decoding) once per content of its sources, caches the binary
// next to the control plane's, and runs it in its `oracle` mode (the pod manager, see
// bench/go/oracle.go for the protocol) or its `decode` mode (manifests, bench/go/decode.go).

import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { defaultCacheRoot } from '../../src/cluster/control-plane-build.js';

const execFileAsync = promisify(execFile);

const BINARY_NAME = 'podmanagerbench';
const CACHE_PREFIX = 'pod-manager-oracle-';
/** What `go build -v` lists for bench/go from an empty build cache (fewer when it is warm). */
const PACKAGES = 930;

/** bench/go from test/helpers (ts) and from build/test/helpers (js). */
export function podManagerOracleSourceDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const candidate = resolve(here, up, 'bench', 'go');
    if (existsSync(join(candidate, 'go.mod'))) return candidate;
  }
  throw new Error(`bench/go (the Go pod manager oracle) was not found above ${here}`);
}

/** Hash of what decides the binary: every *.go file, go.mod and go.sum, by name and content. */
async function sourceHash(sourceDir: string): Promise<string> {
  const names = (await readdir(sourceDir)).filter((n) => n.endsWith('.go') || n === 'go.mod' || n === 'go.sum').sort();
  const hash = createHash('sha256');
  for (const name of names) hash.update(name).update('\0').update(await readFile(join(sourceDir, name))).update('\0');
  return hash.digest('hex').slice(0, 16);
}

export interface OracleBuildOptions {
  progress?: (line: string) => void;
  /** Minimum pause between two progress lines. Default 5 s. */
  progressIntervalMs?: number;
}

/**
 * The path of the oracle binary for the current bench/go sources, building it when the cache
 * has none. With the Kubernetes packages already in Go's build cache (the control plane build
 * puts most of them there) a build is mostly a link: 10–30 s on two cores. From an empty build
 * cache it compiles about 930 packages: 6 min 41 s measured on two busy cores (3 min 49 s CPU).
 */
export async function ensurePodManagerOracle(options: OracleBuildOptions = {}): Promise<string> {
  const sourceDir = podManagerOracleSourceDir();
  const hash = await sourceHash(sourceDir);
  const cacheDir = join(defaultCacheRoot(), `${CACHE_PREFIX}${hash}`);
  const binary = join(cacheDir, BINARY_NAME);
  try {
    await access(binary, fsConstants.X_OK);
    return binary;
  } catch {
    // Not built yet for these sources.
  }
  try {
    await execFileAsync('go', ['env', 'GOVERSION']);
  } catch (err) {
    throw new Error('the pod manager oracle test needs Go >= 1.24 on PATH: it builds bench/go (the kubelet\'s pod manager)', {
      cause: err,
    });
  }
  await mkdir(cacheDir, { recursive: true });
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  // A temporary name renamed into place: a concurrent or interrupted build never leaves a
  // half-written binary where another run would take it.
  const temp = `${binary}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await goBuild(sourceDir, temp, progress, options.progressIntervalMs ?? 5_000);
    await rename(temp, binary);
  } finally {
    await rm(temp, { force: true });
  }
  // Builds of older sources are never used again.
  for (const entry of await readdir(dirname(cacheDir))) {
    if (entry.startsWith(CACHE_PREFIX) && entry !== basename(cacheDir)) {
      await rm(join(dirname(cacheDir), entry), { recursive: true, force: true });
    }
  }
  return binary;
}

function goBuild(sourceDir: string, output: string, progress: (line: string) => void, intervalMs: number): Promise<void> {
  const started = Date.now();
  progress(`building the Go pod manager oracle (bench/go) in ${sourceDir}; later runs reuse the binary until bench/go changes`);
  return new Promise((resolvePromise, reject) => {
    // -trimpath as in the control plane build, so the two share Go's build cache.
    const child = spawn('go', ['build', '-trimpath', '-v', '-o', output, '.'], {
      cwd: sourceDir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const tail: string[] = [];
    let packages = 0;
    let lastReport = Date.now();
    createInterface({ input: child.stderr }).on('line', (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
      if (/^[\w.-]+(\/[\w.~+-]+)*$/.test(line)) packages += 1;
      if (Date.now() - lastReport >= intervalMs) {
        lastReport = Date.now();
        progress(`building the oracle… ${packages} of at most about ${PACKAGES} packages (${Math.round((lastReport - started) / 1000)} s)`);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) {
        progress(`built the Go pod manager oracle in ${Math.round((Date.now() - started) / 1000)} s (${packages} packages compiled)`);
        resolvePromise();
      } else {
        reject(new Error(`go build of bench/go failed (${signal ?? `exit code ${code}`}):\n${tail.join('\n')}`));
      }
    });
  });
}

/** One call of a sequence; pods are indices into the sequence's pod list. */
export type OracleCall =
  | { op: 'addPod' | 'updatePod' | 'removePod'; pod: number }
  | { op: 'setPods'; pods: number[] }
  | { op: 'getPods' | 'getPodsAndMirrorPods' | 'getUIDTranslations' | 'ephemeralContainers' }
  | { op: 'getPodByUID' | 'translatePodUID'; uid: string }
  | { op: 'getPodByFullName'; fullName: string }
  | { op: 'getPodByName'; namespace: string; name: string }
  | { op: 'getPodByMirrorPod' | 'getMirrorPodByPod' | 'getPodAndMirrorPod' | 'classifyPod'; pod: number }
  | { op: 'isMirrorPodOf'; mirrorPod: number; pod: number };

export interface OracleSequence {
  /** Pods as JSON data (what Go decodes into *v1.Pod). */
  pods: unknown[];
  calls: OracleCall[];
}

export interface OracleAnswer {
  /** Index of the query in `calls`. */
  call: number;
  answer: unknown;
}

/**
 * One long-lived oracle process answering sequences one at a time. A process that died (a
 * crash in Go outside a call) is started again for the next sequence.
 */
export class PodManagerOracle {
  #child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  #lines: string[] = [];
  #taken = 0;
  #waiter: (() => void) | undefined;
  #stderr = '';
  #exit: string | undefined;

  /** `oracle` answers call sequences (replay); `decode` decodes manifests (decode). */
  constructor(
    readonly binary: string,
    readonly mode: 'oracle' | 'decode' = 'oracle',
  ) {}

  /**
   * A manifest decoded as the kubelet's sources decode it before their own static-pod
   * defaults (bench/go/decode.go): the v1 pod as Go writes it, or the decoder's refusal.
   */
  async decode(manifest: string): Promise<{ pod?: unknown; error?: string }> {
    const child = this.#start();
    child.stdin.write(`${JSON.stringify({ manifest })}\n`);
    return JSON.parse(await this.#nextLine()) as { pod?: unknown; error?: string };
  }

  /** The answers of every query of `sequence`, in call order. */
  async replay(sequence: OracleSequence): Promise<OracleAnswer[]> {
    const child = this.#start();
    child.stdin.write(`${JSON.stringify(sequence)}\n`);
    const answers: OracleAnswer[] = [];
    for (;;) {
      const line = await this.#nextLine();
      const parsed = JSON.parse(line) as { end?: true; error?: string; call?: number; answer?: unknown };
      if (parsed.error !== undefined) {
        throw new Error(`the oracle refused the sequence${parsed.call !== undefined ? ` at call ${parsed.call}` : ''}: ${parsed.error}`);
      }
      if (parsed.end) return answers;
      answers.push({ call: parsed.call!, answer: parsed.answer });
    }
  }

  async close(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdin.end();
    await exited;
  }

  #start(): ChildProcessByStdio<Writable, Readable, Readable> {
    if (this.#child) return this.#child;
    const child = spawn(this.binary, [this.mode], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.#lines = [];
    this.#taken = 0;
    this.#stderr = '';
    this.#exit = undefined;
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.#lines.push(line);
      this.#wake();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4_000);
    });
    child.on('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      this.#exit = `the oracle exited (${signal ?? `code ${code}`}): ${this.#stderr.trim()}`;
      this.#wake();
    });
    child.on('error', (err) => {
      this.#exit = `the oracle did not start: ${err.message}`;
      this.#wake();
    });
    this.#child = child;
    return child;
  }

  async #nextLine(): Promise<string> {
    for (;;) {
      if (this.#taken < this.#lines.length) {
        const line = this.#lines[this.#taken++]!;
        if (this.#taken === this.#lines.length) {
          this.#lines = [];
          this.#taken = 0;
        }
        return line;
      }
      if (this.#exit !== undefined) throw new Error(this.#exit);
      await new Promise<void>((r) => (this.#waiter = r));
    }
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }
}
