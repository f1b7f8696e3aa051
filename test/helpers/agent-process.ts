// Our agent as users run it (`kubelet-pods run`, the package's bundled command in dist/bin/),
// for tests that put it next to another process such as the hollow kubelet: both sides are then
// separate processes talking to the same API server.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The package's `bin`: the bundle `npm run build` makes (tools/exe/bin-bundle.ts).
const CLI = fileURLToPath(new URL('../../../dist/bin/main.js', import.meta.url));

export interface AgentProcessOptions {
  nodeName: string;
  kubeconfig: string;
  manifestDir?: string;
  manifestURL?: string;
  /** More `run` flags. */
  extraArgs?: readonly string[];
  /** Run this `kubelet-pods` program (such as the single executable) instead of dist/ under node. */
  executable?: string;
  /** Options for node itself, before the program (`--import` a module loader hook). */
  nodeArgs?: readonly string[];
  /** More environment variables. */
  env?: Readonly<Record<string, string>>;
}

export interface AgentProcess {
  readonly child: ChildProcess;
  /** Everything it wrote so far: its JSON log lines (stdout) and any crash output (stderr). */
  logs(): string;
  /** SIGTERM, SIGKILL after `timeoutMs`; resolves once it has exited. Safe to call twice. */
  stop(timeoutMs?: number): Promise<void>;
}

export function startAgentProcess(options: AgentProcessOptions): AgentProcess {
  const args = ['run', '--kubeconfig', options.kubeconfig, '--hostname-override', options.nodeName, '--healthz-port', '0'];
  // No fixed ports unless a test asks for them (its extraArgs come later and win): with flags
  // only, the read-only port would be the kubelet's 10255.
  args.push('--read-only-port', '0', '--port', '0');
  if (options.manifestDir !== undefined) args.push('--pod-manifest-path', options.manifestDir);
  if (options.manifestURL !== undefined) args.push('--manifest-url', options.manifestURL);
  args.push(...(options.extraArgs ?? []));
  const env = options.env !== undefined ? { ...process.env, ...options.env } : process.env;
  const child =
    options.executable !== undefined
      ? spawn(options.executable, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
      : spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // Never outlive the test process.
  const kill = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', kill);
  return {
    child,
    logs: () => log,
    async stop(timeoutMs = 10_000) {
      process.removeListener('exit', kill);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
