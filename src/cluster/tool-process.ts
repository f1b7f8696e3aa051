// Running one of the Go tools (control plane, hollow kubelet) as a child process: its stderr
// appended to a log file, one JSON "ready" line awaited on stdout, a bounded stop, and no
// child left behind when this process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';

// Every child still running when this process exits is killed. The children also stop by
// themselves when their stdin pipe closes (--exit-with-stdin), which covers a parent that is
// killed without running exit handlers.
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of liveChildren) c.kill('SIGKILL');
    });
  }
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
}

/** The last `lines` lines of a log file ('' when it cannot be read). */
export async function logTail(path: string, lines = 25): Promise<string> {
  try {
    const fh = await open(path, 'r');
    try {
      const { size } = await fh.stat();
      const length = Math.min(size, 8192);
      const buf = Buffer.alloc(length);
      await fh.read(buf, 0, length, size - length);
      return buf.toString('utf8').split('\n').filter(Boolean).slice(-lines).join('\n');
    } finally {
      await fh.close();
    }
  } catch {
    return '';
  }
}

function withTail(reason: string, tail: string): string {
  return tail === '' ? reason : `${reason}; last lines of its log:\n${tail}`;
}

export interface RunningTool<R> {
  child: ChildProcess;
  /** The parsed ready line. */
  ready: R;
  /** Resolves once the child has exited and its pipes are closed. */
  exited: Promise<void>;
}

export interface LaunchOptions<R> {
  binary: string;
  args: readonly string[];
  /** The child's stderr is appended here. */
  logFile: string;
  timeoutMs: number;
  /** Whether a JSON value printed on stdout is the ready line. */
  isReady: (parsed: unknown) => parsed is R;
  /** The error for a child that exits, cannot run or is not ready in time. */
  failure: (logFile: string, reason: string) => Error;
}

/**
 * Starts the program and resolves with its ready line. On failure the child is killed and
 * the error carries the last lines of its log.
 */
export async function launchTool<R>(options: LaunchOptions<R>): Promise<RunningTool<R>> {
  const { binary, logFile, timeoutMs } = options;
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, options.args, { stdio: ['pipe', 'pipe', logFd] });
  } finally {
    closeSync(logFd);
  }
  track(child);
  // Once the program has exited, its stdin pipe (kept open for --exit-with-stdin) and stdout
  // must be closed on our side too, or they keep this process alive after a stop.
  const exited = new Promise<void>((r) => {
    const closePipes = (): void => {
      child.stdin?.destroy();
      child.stdout?.destroy();
      r();
    };
    if (child.exitCode !== null || child.signalCode !== null) closePipes();
    else child.once('exit', closePipes);
  });

  const ready = await new Promise<R>((resolveReady, reject) => {
    let settled = false;
    const fail = (reason: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      void logTail(logFile).then((tail) => reject(options.failure(logFile, withTail(reason, tail))));
    };
    const timer = setTimeout(() => fail(`no ready line within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
    child.once('error', (err) => fail(`cannot run ${JSON.stringify(binary)}: ${err.message}`));
    child.once('exit', (code, signal) =>
      fail(signal !== null ? `it was killed by ${signal}` : `it exited with code ${code} before it was ready`),
    );
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (settled) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return; // not the ready line
      }
      if (options.isReady(parsed)) {
        settled = true;
        clearTimeout(timer);
        resolveReady(parsed);
      }
    });
  });
  // Nothing more is expected on stdout, but keep draining it so the child never blocks.
  child.stdout!.resume();
  return { child, ready, exited };
}

/** SIGTERM, then SIGKILL after `timeoutMs`; resolves once the child has exited. */
export async function terminateTool(running: RunningTool<unknown>, timeoutMs: number): Promise<void> {
  const { child, exited } = running;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((r) => {
      timer = setTimeout(() => r(true), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    child.kill('SIGKILL');
    await exited;
  }
}
