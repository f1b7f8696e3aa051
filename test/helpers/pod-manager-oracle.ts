// The kubelet's own code as a test oracle: builds bench/go (k8s.io/kubernetes v1.34.4
// pkg/kubelet/pod and the API's decoding) once per content of its sources, cached like the
// programs under tools/ (src/cluster/go-tool-build.ts), and runs it in its `oracle` mode (the
// pod manager, see bench/go/oracle.go for the protocol) or its `decode` mode (manifests,
// bench/go/decode.go). The pod manager benchmark runs the same binary.

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { ensureGoTool, type GoTool, type GoToolBuildOptions } from '../../src/cluster/go-tool-build.js';

/** bench/go as a Go program built and cached like the tools (its entries: `pod-manager-oracle-<hash>`). */
export const POD_MANAGER_ORACLE_TOOL: GoTool = {
  id: 'pod-manager-oracle',
  binaryName: 'podmanagerbench',
  title: 'the Go pod manager oracle (bench/go)',
  binaryEnv: 'KUBELET_PODS_POD_MANAGER_ORACLE',
  approxPackages: 930,
  firstBuildEstimate: 'mostly a link once the control plane is built, several minutes from an empty Go build cache',
};

/** bench/go from test/helpers (ts) and from build/test/helpers (js). */
export function podManagerOracleSourceDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const candidate = resolve(here, up, 'bench', 'go');
    if (existsSync(join(candidate, 'go.mod'))) return candidate;
  }
  throw new Error(`bench/go (the Go pod manager oracle) was not found above ${here}`);
}

/** The path of the oracle binary for the current bench/go sources, built when the cache has none. */
export async function ensurePodManagerOracle(options: GoToolBuildOptions = {}): Promise<string> {
  return (await ensureGoTool(POD_MANAGER_ORACLE_TOOL, { sourceDir: podManagerOracleSourceDir(), ...options })).path;
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
