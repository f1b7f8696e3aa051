// kwok (kubernetes-sigs/kwok, tools/kwok) as a child process against a local control plane, for
// the benchmark that puts `kubelet-pods fleet` beside it (bench/agent/kwok.bench.ts). kwok is
// measurement infrastructure like the hollow kubelet: built from its pinned Go module by the
// same builder and cache as the control plane, never shipped in dist/.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';

import { kpError } from '../../src/errors.js';
import { defaultToolSourceDir, ensureGoTool, type GoTool, type GoToolBinary, type GoToolBuildOptions } from '../../src/cluster/go-tool-build.js';
import { logTail } from '../../src/cluster/tool-process.js';

const execFileAsync = promisify(execFile);

/** The kwok release tools/kwok/go.mod pins. */
export const KWOK_VERSION = 'v0.8.0';
export const KWOK_MODULE = 'sigs.k8s.io/kwok';

/** Set this to the path of an already built kwok to skip the build (the stages still come from the module). */
export const KWOK_BINARY_ENV = 'KUBELET_PODS_KWOK';

/**
 * kwok's own main package, built from its module as go.mod's `tool` line pins it: no copy of
 * its main in tools/kwok, so what runs is exactly the release's command.
 */
export const KWOK_TOOL: GoTool = {
  id: 'kwok',
  binaryName: 'kwok',
  title: `kwok ${KWOK_VERSION} (kubernetes-sigs/kwok)`,
  binaryEnv: KWOK_BINARY_ENV,
  buildPackage: `${KWOK_MODULE}/cmd/kwok`,
  approxPackages: 700,
  firstBuildEstimate: 'a few minutes on 2 cores after the control plane, up to about 15 from an empty Go build cache: its k8s.io modules are v0.36',
};

/** The annotation (and value) that marks the Nodes kwok manages here, as kwok's docs use it. */
export const KWOK_NODE_ANNOTATION = { key: 'kwok.x-k8s.io/node', value: 'fake' } as const;

const NODE_FAST = 'kustomize/stage/node/fast';
const POD_FAST = 'kustomize/stage/pod/fast';

/** kwok's shipped "fast" stages: Nodes Ready at once, pods Running at once, deleted at once. */
export const KWOK_FAST_STAGES = [NODE_FAST, POD_FAST] as const;

/**
 * How a default `kwokctl create cluster` runs kwok (v0.8.0's defaults): node Leases of 40 s,
 * which kwok renews every quarter of that as a kubelet does, the Node heartbeat stage meant to
 * go with Leases, and the fast node and pod stages. This is the kwok users get, and with it both
 * peers of the benchmark keep their Nodes alive the kubelet's way.
 */
export const KWOK_KWOKCTL_DEFAULTS = {
  stages: [NODE_FAST, 'kustomize/stage/node/heartbeat-with-lease', POD_FAST],
  nodeLeaseDurationSeconds: 40,
} as const;

/** Returns the kwok program for the current tools/kwok, building it if the cache has none. */
export function ensureKwokBinary(options: GoToolBuildOptions = {}): Promise<GoToolBinary> {
  return ensureGoTool(KWOK_TOOL, options);
}

/**
 * The directory of kwok's module in Go's module cache, downloaded if it is not there yet
 * (`go list -m` names no directory for a module it has not downloaded).
 */
export async function kwokModuleDir(toolDir = defaultToolSourceDir(KWOK_TOOL.id), goCommand = 'go'): Promise<string> {
  const dirOf = async (): Promise<string> =>
    (await execFileAsync(goCommand, ['list', '-m', '-f', '{{.Dir}}', KWOK_MODULE], { cwd: toolDir })).stdout.trim();
  try {
    let dir = await dirOf();
    if (dir === '') {
      await execFileAsync(goCommand, ['mod', 'download', KWOK_MODULE], { cwd: toolDir });
      dir = await dirOf();
    }
    if (dir === '') throw new Error(`go list -m names no directory for ${KWOK_MODULE}`);
    return dir;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw kpError('KP_ERR_CLUSTER_KWOK_START', [`in ${toolDir}`, `cannot find kwok's module, which holds its stages: ${why}`], { cause: err });
  }
}

/**
 * The files of one kustomization of kwok's module (`kustomize/stage/pod/fast`), in the order
 * its `resources` lists them, as absolute paths. kwok reads Stage objects from `--config`
 * files and knows nothing of kustomize, so the listed files are passed one by one.
 */
export async function kustomizationFiles(moduleDir: string, kustomization: string): Promise<string[]> {
  const dir = resolve(moduleDir, kustomization);
  const file = join(dir, 'kustomization.yaml');
  const doc = parseYaml(await readFile(file, 'utf8')) as { resources?: unknown } | null;
  const resources = doc?.resources;
  if (!Array.isArray(resources) || resources.length === 0 || !resources.every((r) => typeof r === 'string' && r.endsWith('.yaml'))) {
    throw kpError('KP_ERR_CLUSTER_KWOK_START', [file, 'resources: expected a list of YAML files of Stages']);
  }
  return resources.map((r: string) => join(dir, r));
}

export interface KwokOptions {
  /** A kubeconfig kwok uses for everything (an admin's: it writes Nodes, Leases and pods of every node it manages). */
  kubeconfig: string;
  /** Kustomizations of kwok's module whose Stages it plays. Default: the fast node and pod stages. */
  stages?: readonly string[];
  /** When set, kwok holds a Lease of this many seconds for every Node it manages. Default: none (kwok's own default). */
  nodeLeaseDurationSeconds?: number;
  /** Where kwok's log goes. Default: a file in its temporary work directory, removed by stop(). */
  logFile?: string;
  /** More flags for kwok. */
  extraArgs?: readonly string[];
  /** A kwok program to run instead of the cached build. */
  binary?: string;
  build?: GoToolBuildOptions;
  /** How long a start may take to answer /healthz. Default 60 s. */
  readyTimeoutMs?: number;
}

/** A running kwok. */
export interface Kwok {
  readonly pid: number;
  /** The Stage files it was given, absolute paths inside kwok's module. */
  readonly stageFiles: readonly string[];
  readonly logFile: string;
  logs(): Promise<string>;
  /** SIGTERM, SIGKILL after 10 s; removes its work directory. Safe to call twice. */
  stop(): Promise<void>;
}

async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The flags kwok runs with here: nodes by annotation, the stage files, its server on loopback only. */
export function kwokArgs(kubeconfig: string, stageFiles: readonly string[], port: number, extraArgs: readonly string[] = [], nodeLeaseDurationSeconds?: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    ...stageFiles.map((f) => `--config=${f}`),
    `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION.key}=${KWOK_NODE_ANNOTATION.value}`,
    ...(nodeLeaseDurationSeconds !== undefined ? [`--node-lease-duration-seconds=${nodeLeaseDurationSeconds}`] : []),
    // Its /healthz tells when it runs; loopback, as every listener of this project.
    `--server-address=127.0.0.1:${port}`,
    ...extraArgs,
  ];
}

async function untilHealthy(child: ChildProcess, port: number, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw kpError('KP_ERR_CLUSTER_KWOK_START', [`log: ${logFile}`, `it exited (${child.exitCode ?? child.signalCode}) before it answered /healthz; last lines of its log:\n${await logTail(logFile)}`]);
    }
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) {
      throw kpError('KP_ERR_CLUSTER_KWOK_START', [`log: ${logFile}`, `no answer on /healthz within ${Math.round(timeoutMs / 1000)} s; last lines of its log:\n${await logTail(logFile)}`]);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts kwok against a running control plane with kwok's fast stages (read from its module
 * directory, not copied) and resolves once its server answers /healthz, which it starts after
 * its controllers. It manages the Nodes annotated `kwok.x-k8s.io/node=fake`: creating them is
 * the caller's part, as with kwok anywhere.
 */
export async function startKwok(options: KwokOptions): Promise<Kwok> {
  const binary = options.binary ?? (await ensureKwokBinary(options.build)).path;
  const moduleDir = await kwokModuleDir();
  const stageFiles = (await Promise.all((options.stages ?? KWOK_FAST_STAGES).map((s) => kustomizationFiles(moduleDir, s)))).flat();
  // kwok also reads ~/.kwok/kwok.yaml when it exists: a work directory of its own keeps a
  // user's configuration out of the measurement.
  const workDir = await mkdtemp(join(tmpdir(), 'kwok-'));
  const removeWorkDir = (): void => rmSync(workDir, { recursive: true, force: true });
  process.once('exit', removeWorkDir);
  const logFile = options.logFile ?? join(workDir, 'kwok.log');
  const port = await freeLoopbackPort();
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, kwokArgs(options.kubeconfig, stageFiles, port, options.extraArgs, options.nodeLeaseDurationSeconds), {
      stdio: ['ignore', logFd, logFd],
      env: { ...process.env, HOME: workDir, KWOK_WORKDIR: workDir },
    });
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', removeWorkDir);
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    await untilHealthy(child, port, options.readyTimeoutMs ?? 60_000, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    pid: child.pid!,
    stageFiles,
    logFile,
    logs: () => readFile(logFile, 'utf8').catch(() => ''),
    stop,
  };
}
