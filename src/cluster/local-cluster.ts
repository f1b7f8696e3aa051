import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { kpError } from '../errors.js';
import { ensureControlPlaneBinary, type ControlPlaneBuildOptions } from './control-plane-build.js';
import { launchTool, terminateTool, type RunningTool } from './tool-process.js';

export interface LocalClusterOptions {
  /**
   * State directory: kubeconfigs, certificates, tokens, etcd data (with keepData) and
   * control-plane.log. Default: a new temporary directory, removed again by stop().
   */
  dir?: string;
  /** Node names that each get a `system:node:<name>` identity and `<dir>/<name>.kubeconfig`. */
  nodes: readonly string[];
  /**
   * Keep etcd data in `<dir>/etcd` after stop() so a later start with the same dir finds the
   * same objects. Without it every start begins with an empty cluster. restart() keeps the
   * data either way.
   */
  keepData?: boolean;
  /** kube-apiserver port on 127.0.0.1; default a free one. */
  securePort?: number;
  /** etcd client port on 127.0.0.1; default a free one. */
  etcdPort?: number;
  /**
   * How often kube-apiserver compacts etcd history, as a Go duration (default `5m`, the API
   * server's own default). After a compaction a watch from an older resourceVersion gets
   * 410 Gone, so tests of that path shorten it (e.g. `5s`).
   */
  etcdCompactionInterval?: string;
  /**
   * Addresses besides 127.0.0.1 where the API server is also reachable on its port (relayed
   * to loopback) and which its serving certificate names: the host end of a veth pair, for an
   * agent in a network namespace that the API server proxies to. None by default.
   */
  extraAddresses?: readonly string[];
  /**
   * An audit policy (audit.k8s.io/v1 Policy file) for kube-apiserver: with it, every request
   * the policy selects is written as one JSON line to `auditLogFile` (`<dir>/audit.log`), in
   * blocking mode, so the log is complete once the request is answered. Off by default.
   */
  auditPolicyFile?: string;
  /**
   * Run kube-scheduler (default true): pods without `spec.nodeName` get bound to a Node that
   * fits. Started once the API server is ready; the start resolves once it is ready too.
   */
  scheduler?: boolean;
  /**
   * Run kube-controller-manager (default true): namespaces get their `default` ServiceAccount
   * and finish deleting, Deployments get pods, the pod GC deletes pods of Nodes that do not
   * exist, a Node that stops renewing its Lease is marked Unknown. The start resolves once its
   * /healthz answers (its controllers start right after).
   */
  controllerManager?: boolean;
  /** A kube-control-plane program to run instead of the cached build. */
  binary?: string;
  /** Options for the cached build (ignored with `binary`). */
  build?: ControlPlaneBuildOptions;
  /** How long one start may take to answer /readyz. Default 180 s (the first start on a busy 2-core machine is slow). */
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before it sends SIGKILL. Default 20 s. */
  stopTimeoutMs?: number;
}

/**
 * A running local control plane: a real etcd and kube-apiserver on loopback, and (unless
 * turned off) kube-scheduler and kube-controller-manager.
 */
export interface LocalCluster {
  readonly dir: string;
  /** `https://127.0.0.1:<port>`; the same across restart(). */
  readonly server: string;
  /** Kubeconfig of an admin in system:masters. */
  readonly adminKubeconfig: string;
  /** Per node name, a kubeconfig authenticating as `system:node:<name>` (group system:nodes). */
  readonly nodeKubeconfigs: Readonly<Record<string, string>>;
  readonly securePort: number;
  readonly etcdPort: number;
  /** What runs besides etcd and kube-apiserver: `kube-scheduler`, `kube-controller-manager`. */
  readonly components: readonly string[];
  /**
   * The cluster CA (`<dir>/pki/ca.crt`): it signed the API server's serving certificate and
   * the client certificate the API server presents to kubelets (CN
   * kube-apiserver-kubelet-client, O system:masters), so an agent's `clientCAFile`.
   */
  readonly caFile: string;
  /**
   * The program's stderr, appended across restarts: kube-apiserver's and etcd's log, and the
   * scheduler's and controller manager's lines prefixed `[kube-scheduler] ` and
   * `[kube-controller-manager] `.
   */
  readonly logFile: string;
  /** The API server's audit log (JSON lines) when `auditPolicyFile` was given. */
  readonly auditLogFile?: string;
  /** True between a successful start and the next stop. */
  readonly running: boolean;
  /**
   * Stops the control plane: SIGTERM, then SIGKILL after stopTimeoutMs. The data and
   * credentials stay, so start() can bring the same cluster back (an API-server outage in
   * tests). Safe to call twice.
   */
  stop(): Promise<void>;
  /**
   * Starts a stopped control plane again on the same ports with the same data and
   * credentials, so existing clients and kubeconfigs keep working once it is ready. Does
   * nothing while it runs.
   */
  start(): Promise<void>;
  /** stop() then start(). */
  restart(): Promise<void>;
  /**
   * Stops the control plane for good and removes what it was not asked to keep: the etcd
   * data unless keepData, and the whole directory if it was a temporary one. Afterwards
   * start() and restart() reject.
   */
  dispose(): Promise<void>;
}

/** The JSON line kube-control-plane prints on stdout once /readyz answers ok. */
interface ReadyLine {
  ready: boolean;
  server: string;
  adminKubeconfig: string;
  nodeKubeconfigs: Record<string, string>;
  securePort: number;
  etcdPort: number;
  /** Absent from programs older than the components. */
  components?: string[];
}

const DEFAULT_READY_TIMEOUT_MS = 180_000;
const DEFAULT_STOP_TIMEOUT_MS = 20_000;

function isReadyLine(parsed: unknown): parsed is ReadyLine {
  return typeof parsed === 'object' && parsed !== null && (parsed as ReadyLine).ready === true;
}

type Running = RunningTool<ReadyLine>;

function launch(binary: string, args: string[], logFile: string, timeoutMs: number): Promise<Running> {
  return launchTool({
    binary,
    args,
    logFile,
    timeoutMs,
    isReady: isReadyLine,
    failure: (log, reason) => kpError('KP_ERR_CLUSTER_START', [log, reason]),
  });
}

/**
 * Starts a real etcd and kube-apiserver (Kubernetes v1.34) on loopback, then kube-scheduler and
 * kube-controller-manager unless turned off, and resolves once all of them are ready. Authentication is by static tokens (an admin and one identity per
 * node); authorization is Node,RBAC with the NodeRestriction admission plugin, as on a real
 * cluster. The program is built on first use (see ensureControlPlaneBinary).
 */
export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const nodes = options.nodes.map((n) => n.trim()).filter((n) => n !== '');
  const ownsDir = options.dir === undefined;
  const dir = ownsDir ? await mkdtemp(join(tmpdir(), 'kubelet-pods-cluster-')) : resolve(options.dir!);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const etcdDir = join(dir, 'etcd');
  const keepData = options.keepData ?? false;
  // The program always keeps etcd data in <dir>/etcd so restart() finds it; "not keeping"
  // is done here, by starting from and leaving behind an empty directory.
  if (!keepData) await rm(etcdDir, { recursive: true, force: true });

  const binary = options.binary ?? (await ensureControlPlaneBinary(options.build)).path;
  const logFile = join(dir, 'control-plane.log');
  const auditLogFile = options.auditPolicyFile !== undefined ? join(dir, 'audit.log') : undefined;
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;

  const argsFor = (securePort: number | undefined, etcdPort: number | undefined): string[] => {
    const args = [`--dir=${dir}`, `--nodes=${nodes.join(',')}`, '--keep-data', '--exit-with-stdin'];
    if (securePort !== undefined) args.push(`--secure-port=${securePort}`);
    if (etcdPort !== undefined) args.push(`--etcd-port=${etcdPort}`);
    if (options.extraAddresses !== undefined && options.extraAddresses.length > 0) {
      args.push(`--extra-address=${options.extraAddresses.join(',')}`);
    }
    if (options.etcdCompactionInterval !== undefined) {
      args.push(`--etcd-compaction-interval=${options.etcdCompactionInterval}`);
    }
    if (options.auditPolicyFile !== undefined) {
      args.push(`--audit-policy-file=${resolve(options.auditPolicyFile)}`, `--audit-log-path=${auditLogFile}`);
    }
    if (options.scheduler === false) args.push('--scheduler=false');
    if (options.controllerManager === false) args.push('--controller-manager=false');
    return args;
  };

  let running: Running | undefined = await launch(
    binary,
    argsFor(options.securePort, options.etcdPort),
    logFile,
    readyTimeoutMs,
  );
  const first = running.ready;
  let disposed = false;
  // A temporary directory nobody disposed of is still removed when this process exits.
  const removeOwnedDir = (): void => rmSync(dir, { recursive: true, force: true });
  if (ownsDir) process.once('exit', removeOwnedDir);

  const stop = async (): Promise<void> => {
    const current = running;
    running = undefined;
    if (current !== undefined) await terminateTool(current, stopTimeoutMs);
  };
  const start = async (): Promise<void> => {
    if (disposed) throw kpError('KP_ERR_CLUSTER_STOPPED', ['start']);
    if (running !== undefined) return;
    running = await launch(binary, argsFor(first.securePort, first.etcdPort), logFile, readyTimeoutMs);
  };

  return {
    dir,
    server: first.server,
    adminKubeconfig: first.adminKubeconfig,
    nodeKubeconfigs: { ...first.nodeKubeconfigs },
    securePort: first.securePort,
    etcdPort: first.etcdPort,
    components: [...(first.components ?? [])],
    caFile: join(dir, 'pki', 'ca.crt'),
    logFile,
    ...(auditLogFile !== undefined ? { auditLogFile } : {}),
    get running() {
      return running !== undefined;
    },
    stop,
    start,
    async restart() {
      if (disposed) throw kpError('KP_ERR_CLUSTER_STOPPED', ['restart']);
      await stop();
      await start();
    },
    async dispose() {
      disposed = true;
      await stop();
      if (ownsDir) {
        process.removeListener('exit', removeOwnedDir);
        await rm(dir, { recursive: true, force: true });
      } else if (!keepData) {
        await rm(etcdDir, { recursive: true, force: true });
      }
    },
  };
}
