// The real kubelet of Kubernetes v1.34 (tools/hollow-kubelet: kubemark's "hollow kubelet",
// the kubelet's own code with a fake container runtime) as a child process, for differential
// tests and benchmarks that put it beside kubelet-pods' agent on one local control plane.
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { kpError } from '../../src/errors.js';
import { ensureGoTool, type GoTool, type GoToolBinary, type GoToolBuildOptions } from '../../src/cluster/go-tool-build.js';
import { launchTool, terminateTool, type RunningTool } from '../../src/cluster/tool-process.js';

/** The file name of the built hollow kubelet inside its cache directory. */
export const HOLLOW_KUBELET_BINARY_NAME = 'hollow-kubelet';

/** Set this to the path of an already built hollow-kubelet to skip the build. */
export const HOLLOW_KUBELET_BINARY_ENV = 'KUBELET_PODS_HOLLOW_KUBELET';

/** The Kubernetes release tools/hollow-kubelet/go.mod pins; it reports this as its version. */
export const HOLLOW_KUBELET_KUBERNETES_VERSION = 'v1.34.4';

/**
 * Without the version stamped in at link time the kubelet reports `v0.0.0-master+$Format…`
 * as its version (in the Node's nodeInfo and its User-Agent), which no real kubelet does.
 * Linker flags do not change compiled packages, so the build still reuses the control
 * plane's packages from Go's build cache.
 */
export const HOLLOW_KUBELET_TOOL: GoTool = {
  id: 'hollow-kubelet',
  binaryName: HOLLOW_KUBELET_BINARY_NAME,
  title: 'the hollow kubelet (the real kubelet with a fake container runtime)',
  binaryEnv: HOLLOW_KUBELET_BINARY_ENV,
  buildArgs: [
    `-ldflags=-X k8s.io/component-base/version.gitVersion=${HOLLOW_KUBELET_KUBERNETES_VERSION}` +
      ' -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34' +
      ' -X k8s.io/component-base/version.gitTreeState=clean',
  ],
  approxPackages: 1750,
  firstBuildEstimate: 'one to six minutes on 2 cores once the control plane is built, longer from an empty Go build cache',
};

/** Returns the hollow kubelet program for the current sources, building it if the cache has none. */
export function ensureHollowKubeletBinary(options: GoToolBuildOptions = {}): Promise<GoToolBinary> {
  return ensureGoTool(HOLLOW_KUBELET_TOOL, options);
}

export interface HollowKubeletOptions {
  /** The Node name (the kubelet's --hostname-override). */
  nodeName: string;
  /**
   * The local cluster whose credentials for `nodeName` the kubelet uses (the node must be in
   * its `nodes`). Give `kubeconfig` instead for another cluster.
   */
  cluster?: { readonly nodeKubeconfigs: Readonly<Record<string, string>> };
  /** A kubeconfig for `system:node:<nodeName>`; overrides `cluster`. */
  kubeconfig?: string;
  /** The kubelet's staticPodPath (a directory or file of manifests); none by default. */
  staticPodPath?: string;
  /** The kubelet's staticPodURL; none by default. */
  manifestURL?: string;
  /** The kubelet's root directory. Default: a new temporary directory, removed by stop(). */
  rootDir?: string;
  /** Ports on 127.0.0.1; each one left out is a free one. */
  ports?: Partial<HollowKubeletPorts>;
  /** The kubelet's --node-ip (a non-loopback address of this host); default: the kubelet picks one. */
  nodeIP?: string;
  /**
   * Kubelet configuration; every one left out has the kubelet's default (fileCheckFrequency
   * 20 s, httpCheckFrequency 20 s, syncFrequency 1 min, nodeStatusUpdateFrequency 10 s,
   * nodeStatusReportFrequency 5 min, nodeLeaseDurationSeconds 40, maxPods 110, kubeAPIQPS 50,
   * kubeAPIBurst 100).
   */
  fileCheckFrequencyMs?: number;
  httpCheckFrequencyMs?: number;
  syncFrequencyMs?: number;
  nodeStatusUpdateFrequencyMs?: number;
  nodeStatusReportFrequencyMs?: number;
  nodeLeaseDurationSeconds?: number;
  maxPods?: number;
  /**
   * The simulated machine, which the Node reports as capacity and the kubelet admits pods
   * against. Default: kubemark's fake, 1 core and 3840Mi.
   */
  machine?: { cpus?: number; memoryBytes?: number };
  kubeAPIQPS?: number;
  kubeAPIBurst?: number;
  /** Send the kubelet's Events to the API server, as a kubelet does. Default true. */
  recordEvents?: boolean;
  /** klog verbosity (-v). Default 0. */
  verbosity?: number;
  /** More flags for the program (see `hollow-kubelet -help`). */
  extraArgs?: readonly string[];
  /** A hollow-kubelet program to run instead of the cached build. */
  binary?: string;
  /** Options for the cached build (ignored with `binary`). */
  build?: GoToolBuildOptions;
  /** How long a start may take to register the Node and answer /healthz. Default 120 s. */
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before it sends SIGKILL. Default 10 s. */
  stopTimeoutMs?: number;
}

export interface HollowKubeletPorts {
  /** The kubelet API (plain HTTP, no authentication: /pods, /healthz, /metrics, …). */
  kubelet: number;
  /** The read-only port (/pods, /healthz, /metrics). */
  readOnly: number;
  /** The healthz port (/healthz, a ping). */
  healthz: number;
}

/** A running real kubelet. */
export interface HollowKubelet {
  readonly nodeName: string;
  /** The UID of the Node it registered (in this start; a restart keeps the Node). */
  readonly nodeUID: string;
  readonly rootDir: string;
  /** The same across restart(). */
  readonly ports: HollowKubeletPorts;
  /** The kubelet's log (the program's stderr), appended across restarts. */
  readonly logFile: string;
  readonly running: boolean;
  /** The log so far. */
  logs(): Promise<string>;
  /**
   * Stops the kubelet (SIGTERM, SIGKILL after stopTimeoutMs) and starts it again with the
   * same root directory, ports and configuration, as a kubelet restarted by systemd.
   */
  restart(): Promise<void>;
  /**
   * Stops the kubelet for good and removes a temporary root directory. The Node, its Lease
   * and the mirror pods stay in the API server, as after a real kubelet stops. Safe to call
   * twice.
   */
  stop(): Promise<void>;
}

interface ReadyLine {
  ready: boolean;
  nodeName: string;
  nodeUID: string;
  rootDir: string;
  port: number;
  readOnlyPort: number;
  healthzPort: number;
}

function isReadyLine(parsed: unknown): parsed is ReadyLine {
  return typeof parsed === 'object' && parsed !== null && (parsed as ReadyLine).ready === true;
}

const DEFAULT_READY_TIMEOUT_MS = 120_000;
const DEFAULT_STOP_TIMEOUT_MS = 10_000;

const goDuration = (ms: number): string => `${Math.round(ms)}ms`;

function kubeletArgs(options: HollowKubeletOptions, kubeconfig: string, rootDir: string, ports: Partial<HollowKubeletPorts>): string[] {
  const args = [
    `--node-name=${options.nodeName}`,
    `--kubeconfig=${kubeconfig}`,
    `--root-dir=${rootDir}`,
    '--exit-with-stdin',
    `--record-events=${options.recordEvents ?? true}`,
    `-v=${options.verbosity ?? 0}`,
    // klog writes to stderr, which is the log file.
    '-logtostderr=true',
  ];
  const add = (flag: string, value: string | number | undefined): void => {
    if (value !== undefined) args.push(`--${flag}=${value}`);
  };
  add('static-pod-path', options.staticPodPath !== undefined ? resolve(options.staticPodPath) : undefined);
  add('manifest-url', options.manifestURL);
  add('node-ip', options.nodeIP);
  add('port', ports.kubelet);
  add('read-only-port', ports.readOnly);
  add('healthz-port', ports.healthz);
  const ms = (flag: string, value: number | undefined): void => add(flag, value !== undefined ? goDuration(value) : undefined);
  ms('file-check-frequency', options.fileCheckFrequencyMs);
  ms('http-check-frequency', options.httpCheckFrequencyMs);
  ms('sync-frequency', options.syncFrequencyMs);
  ms('node-status-update-frequency', options.nodeStatusUpdateFrequencyMs);
  ms('node-status-report-frequency', options.nodeStatusReportFrequencyMs);
  add('node-lease-duration-seconds', options.nodeLeaseDurationSeconds);
  add('max-pods', options.maxPods);
  add('machine-cpus', options.machine?.cpus);
  add('machine-memory-bytes', options.machine?.memoryBytes);
  add('kube-api-qps', options.kubeAPIQPS);
  add('kube-api-burst', options.kubeAPIBurst);
  return [...args, ...(options.extraArgs ?? [])];
}

/**
 * Starts a real kubelet (v1.34, fake container runtime) for `nodeName` against a running
 * control plane and resolves once it has registered its Node and its sync loop answers
 * /healthz. The program is built on first use (see ensureHollowKubeletBinary).
 */
export async function startHollowKubelet(options: HollowKubeletOptions): Promise<HollowKubelet> {
  const kubeconfig = options.kubeconfig ?? options.cluster?.nodeKubeconfigs[options.nodeName];
  if (kubeconfig === undefined) {
    throw kpError('KP_ERR_CLUSTER_KUBELET_START', [
      '',
      `no kubeconfig for node ${JSON.stringify(options.nodeName)}: add it to the local cluster's nodes or pass kubeconfig`,
    ]);
  }
  const ownsRoot = options.rootDir === undefined;
  const rootDir = ownsRoot ? await mkdtemp(join(tmpdir(), `hollow-kubelet-${options.nodeName}-`)) : resolve(options.rootDir!);
  await mkdir(rootDir, { recursive: true });
  // A temporary root nobody stopped is still removed when this process exits.
  const removeOwnedRoot = (): void => rmSync(rootDir, { recursive: true, force: true });
  if (ownsRoot) process.once('exit', removeOwnedRoot);

  const logFile = join(rootDir, 'kubelet.log');
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
  const launch = (ports: Partial<HollowKubeletPorts>): Promise<RunningTool<ReadyLine>> =>
    launchTool({
      binary,
      args: kubeletArgs(options, kubeconfig, rootDir, ports),
      logFile,
      timeoutMs: readyTimeoutMs,
      isReady: isReadyLine,
      failure: (log, reason) => kpError('KP_ERR_CLUSTER_KUBELET_START', [log, reason]),
    });

  let binary: string;
  let running: RunningTool<ReadyLine> | undefined;
  try {
    binary = options.binary ?? (await ensureHollowKubeletBinary(options.build)).path;
    running = await launch(options.ports ?? {});
  } catch (err) {
    if (ownsRoot) {
      process.removeListener('exit', removeOwnedRoot);
      await rm(rootDir, { recursive: true, force: true });
    }
    throw err;
  }
  const first = running.ready;
  const ports: HollowKubeletPorts = { kubelet: first.port, readOnly: first.readOnlyPort, healthz: first.healthzPort };
  let nodeUID = first.nodeUID;
  let stopped = false;

  const kill = async (): Promise<void> => {
    const current = running;
    running = undefined;
    if (current !== undefined) await terminateTool(current, stopTimeoutMs);
  };

  return {
    nodeName: options.nodeName,
    get nodeUID() {
      return nodeUID;
    },
    rootDir,
    ports,
    logFile,
    get running() {
      return running !== undefined;
    },
    logs: () => readFile(logFile, 'utf8').catch(() => ''),
    async restart() {
      if (stopped) throw kpError('KP_ERR_CLUSTER_KUBELET_START', [logFile, 'restart() after stop()']);
      await kill();
      running = await launch(ports);
      nodeUID = running.ready.nodeUID;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await kill();
      if (ownsRoot) {
        process.removeListener('exit', removeOwnedRoot);
        await rm(rootDir, { recursive: true, force: true });
      }
    },
  };
}
