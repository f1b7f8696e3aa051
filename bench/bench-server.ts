// A pod manager benchmark run as a server (`podmanagerbench -serve`, `pod-manager.bench.js
// --serve`): it builds one size's workload, then times each method named on a line of its stdin
// and answers with one JSON line. bench/run.ts keeps a Go one and a TS one per size and round,
// and asks each for a method in turn, so that both sides of a ratio are timed seconds apart.

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { BenchResult } from './pod-manager.bench.js';

export class BenchServer {
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
  readonly #lines: AsyncIterator<string>;
  readonly #name: string;
  #exit: string | undefined;

  private constructor(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv) {
    this.#name = name;
    this.#child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
    this.#child.on('exit', (code, signal) => {
      this.#exit = signal === null ? `exit code ${code}` : `signal ${signal}`;
    });
    // A program that cannot start ends its output too: the first answer awaited reports it.
    this.#child.on('error', (err) => {
      this.#exit ??= err.message;
    });
    this.#lines = createInterface({ input: this.#child.stdout })[Symbol.asyncIterator]();
  }

  /** Starts `command` and waits until it has built its workload. */
  static async start(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<BenchServer> {
    const server = new BenchServer(name, command, args, env);
    const ready = (await server.#next()) as { ready?: boolean };
    if (ready.ready !== true) throw new Error(`${name}: expected {"ready":true}, got ${JSON.stringify(ready)}`);
    return server;
  }

  /** Times `method` on the server's workload. */
  async time(method: string): Promise<BenchResult> {
    this.#child.stdin.write(`${method}\n`);
    const result = (await this.#next()) as BenchResult;
    if (result.method !== method) throw new Error(`${this.#name}: asked for ${method}, got ${JSON.stringify(result)}`);
    return result;
  }

  /** Ends the server's input and waits for it to exit. */
  async close(): Promise<void> {
    if (this.#exit === undefined) {
      const exited = new Promise((resolve) => this.#child.once('exit', resolve));
      this.#child.stdin.end();
      await exited;
    }
  }

  async #next(): Promise<unknown> {
    const { value, done } = await this.#lines.next();
    if (done) throw new Error(`${this.#name} ended before answering (${this.#exit ?? 'output closed'})`);
    try {
      return JSON.parse(value) as unknown;
    } catch {
      throw new Error(`${this.#name} printed something that is not JSON: ${value}`);
    }
  }
}
