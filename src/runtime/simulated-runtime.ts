// The simulated container runtime: the default StatusProvider. This file is its face (options,
// factory, the behaviour it promises); the parts are one job each: simulated-status-provider.ts
// (the pods it runs), container-runs.ts (containers' lives), pod-termination.ts (stopping a
// pod), pending-status.ts and running-status.ts (the statuses), simulation-annotations.ts.

import type { V1PodStatus } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { realClock, type Clock } from '../time/clock.js';
import type { Pod } from '../pod/types.js';
import type { ContainerEventListener, ContainerLogLine, StatusProvider } from '../status/status-provider.js';
import { createContainerLogBuffer, DEFAULT_CONTAINER_LOG_BYTES } from './container-log-buffer.js';
import { createExitedContainers } from './exited-containers.js';
import { createPodAddressAllocator } from './pod-addresses.js';
import { DEFAULT_POD_CIDR, parseIP } from '../values/ip.js';
import { SimulatedStatusProvider } from './simulated-status-provider.js';
import type { Scenario } from '../scenario/scenario-types.js';
import type { NodeLabelsOf } from '../scenario/select.js';
import { podPlan } from './scenario-plan.js';

export interface SimulatedStatusProviderOptions {
  /** How long a pod stays Pending after it is first seen; 1000 ms by default. */
  startDelayMs?: number;
  clock?: Clock;
  /**
   * The node's IP (the kubelet's `--node-ip`): every pod's hostIP, and the pod IP of
   * host-network pods. Without it, statuses carry no hostIP and host-network pods no pod IP.
   */
  hostIP?: string;
  /**
   * Where the addresses of pods without host networking come from (the kubelet's `podCIDR`);
   * `DEFAULT_POD_CIDR` (10.88.0.0/16) by default. See createPodAddressAllocator.
   */
  podCIDR?: string;
  /**
   * Told when a pod finds `podCIDR` full and starts waiting for an address, once per spell of
   * waiting (again only after every waiting pod got one): a range too small for the pods is a
   * setting to fix, and the waiting pods alone do not say why they wait.
   */
  onRangeFull?: (range: { cidr: string; capacity: bigint }) => void;
  /**
   * Whether the simulated runtime supports recursive read-only mounts, which decides
   * `volumeMounts[].recursiveReadOnly` for mounts that ask for it; false by default, as a
   * runtime that does not announce the feature to the kubelet.
   */
  recursiveReadOnlyMounts?: boolean;
  /**
   * How long each container takes to exit after SIGTERM; 0 (at once) by default. A pod's
   * `simulation.kubelet-pods.io/stop-seconds` annotation overrides it. Beyond the kill budget
   * (max(grace period, 2 s)) the container is killed: exit code 137.
   */
  stopMs?: number;
  /**
   * Up to this much is added to each pod's start delay, a fraction fixed by the pod's UID
   * (the same pod starts as late in every run); 0 by default.
   */
  startJitterMs?: number;
  /** The bound of each container's log; 64 KiB by default. */
  maxLogBytesPerContainer?: number;
  /**
   * Whether the node no longer knows a pod UID, so that the container GC (every minute) may
   * remove the exited containers of a forgotten pod; the kubelet asks its pod workers
   * (`ShouldPodContentBeRemoved`). By default a forgotten pod's containers go at the next pass.
   */
  shouldPodContentBeRemoved?: (uid: string) => boolean;
  /**
   * The node's cluster DNS servers (the kubelet's `clusterDNS`). Without any, each sandbox of a
   * pod whose DNS policy asks for them reports `MissingClusterDNS`, as the kubelet does.
   */
  clusterDNS?: readonly string[];
  /**
   * Scenarios (src/scenario/, docs/lifecycle.md "Scenarios"): the pod behaviours of those that
   * pick a pod, worked out when the runtime first sees it. The pod's own simulation annotations
   * win over them. Node scenarios are not the runtime's (the agent hands them to the Node).
   */
  scenarios?: readonly Scenario[];
  /** The labels of a node by name, for the scenarios' `nodeLabels`; unknown by default. */
  nodeLabels?: NodeLabelsOf;
}

/** The simulated runtime's own calls, beyond the StatusProvider contract. */
export interface SimulatedRuntime extends StatusProvider {
  adopt(pod: Pod, published: V1PodStatus): void;
  forget(uid: string): void;
  stop(): void;
  onChange(listener: (uid: string) => void): () => void;
  onContainerEvent(listener: ContainerEventListener): () => void;
  terminate(pod: Pod, gracePeriodSeconds: number): Promise<void>;
  /**
   * Makes a running container of the pod (an init container or sidecar too) exit with
   * `exitCode` after `afterMs` (0: now); it is then restarted per the pod's restartPolicy (a
   * sidecar always) with the kubelet's crash-loop backoff, and an init container that exits 0
   * lets the next one start. Returns
   * false when the pod or container is unknown or not running (yet).
   */
  exitContainer(uid: string, container: string, exitCode: number, afterMs?: number): boolean;
  containerLogs(uid: string, container: string): readonly ContainerLogLine[] | undefined;
  /** Adds a line (or lines, split at newlines) to a container's log, stamped `time` (now by default). */
  appendContainerLog(uid: string, container: string, text: string, time?: Date): void;
}

/**
 * A documented simulation of a healthy pod start, shaped like the statuses the kubelet v1.34
 * generates (pkg/kubelet/kubelet_pods.go, status/generate.go, and the prober's started and
 * ready) for a runtime whose containers start at once and never stop. No container is run.
 *
 * - The first time the provider is asked about a pod UID, the pod counts as accepted: phase
 *   Pending, startTime = that moment, hostIP/hostIPs = `hostIP`, pod sandbox not ready yet
 *   (PodReadyToStartContainers False, no pod IP unless on the host network), every container
 *   waiting (reason PodInitializing when the pod has init containers, else ContainerCreating),
 *   started and ready false; Initialized False (ContainersNotInitialized) while there are init
 *   containers, Ready and ContainersReady False (ContainersNotReady), each message naming the
 *   containers as the kubelet's does; PodScheduled True.
 * - `startDelayMs` later the sandbox has its address (podIP/podIPs = `hostIP` on the host
 *   network, else the pod's address from `podCIDR`) and the init containers run in order, one
 *   at a time (each at once, unless the `exit` annotation plans its exit; a failure restarts it
 *   with the crash-loop backoff, or fails the pod under restartPolicy Never), then everything
 *   has started: phase Running, regular init containers terminated (exit code 0, reason
 *   Completed, ready), sidecars (init containers with restartPolicy Always) and containers
 *   running, started and ready (probes are taken to succeed at once); all conditions True,
 *   except Ready when a readiness gate's condition is missing or not True in the static pod's
 *   own status. Phase and Initialized follow from the container statuses (pod-phase.ts).
 * - A container the runtime knows (running or terminated) has a containerID
 *   `kubelet-pods://<pod uid>/<container name>`, imageID = its image reference (no image is
 *   pulled, so there is no digest to report; kubemark's fake runtime reports the same),
 *   `resources` = its allocated resources and `allocatedResources` = their requests (see
 *   container-status.ts). Every container has `volumeMounts`, one per mount. restartCount 0
 *   (but see below).
 * - A pod let go (`forget`) leaves its exited containers behind until the container GC pass
 *   (every minute) after `shouldPodContentBeRemoved` says the UID is gone, as the kubelet's
 *   runtime does. A pod that runs again with that UID meanwhile (a static pod with a fixed
 *   `metadata.uid` put back, a manifest written again) continues from them: each container
 *   (init containers too) starts at the newest attempt + 1 and shows the exited one as
 *   `lastState`; while its new sandbox starts its containers wait with those counts, and the
 *   phase is Running when the restart policy restarts them (the kubelet's getPhase).
 * - A pod handed over with `adopt` (an agent restarted: the status the pod last had in the
 *   API) is taken over rather than started, as a real runtime's containers outlive the kubelet:
 *   what that status shows running keeps running (container IDs, start times, restart counts,
 *   last states, readiness), what it shows exited stays exited unless the restart policy
 *   restarts it (now: the crash-loop back-off went with the old process, as the kubelet's), an
 *   initialization under way goes on, a completed pod stays completed; the pod keeps its start
 *   time, its address (when still free in the range) and its condition times. Read back, the
 *   status is the one adopted. A status that shows no container started is not adopted (the
 *   pod starts afresh), except that exited instances it shows are continued as kept ones.
 * - Not reported: qosClass (the API server sets it on the mirror from the same spec, and it
 *   cannot change), container `user` (the image's user is unknown) and `stopSignal`.
 *
 * It reports what the kubelet's runtime records as Events (`onContainerEvent`, see
 * container-events.ts): on each container start `Pulled` (with `Pulling` first when the image
 * is new to the node or its pull policy is Always), `Created`, `Started`; `SandboxChanged`
 * when a pod runs again while its old sandbox is kept; `BackOff` when a container waits out its
 * crash-loop back-off; `Killing` for each running container when its pod is stopped; and,
 * without `clusterDNS`, `MissingClusterDNS` at each sandbox of a pod that asks for cluster DNS.
 *
 * A pod whose address cannot be allocated (its range is full) stays Pending with its sandbox not
 * ready until another pod is forgotten; it then gets the freed address, its start delay begins
 * and listeners hear about it. Times are whole seconds, as the API server stores them, so a
 * status read back compares equal to the one written. Listeners hear about every Pending →
 * Running step through a timer; `stop` clears every timer.
 *
 * Scenarios (`scenarios`) add behaviours to the pods they pick (scenario-plan.ts): a later
 * start (`startDelay`); a container that exits with a code after each start (`exit`, then the
 * restart policy and the crash-loop back-off as above) or is OOM-killed (`oomKill`: exit code
 * 137, reason `OOMKilled`); an image that never pulls (`imagePullFailure`: the container waits
 * with `ErrImagePull`, then `ImagePullBackOff` between pulls on the kubelet's image back-off,
 * 10 s doubling to 300 s, with its `Pulling`, `Failed` and `BackOff` Events; image-pulls.ts); a
 * readiness probe that fails or flaps (`readiness`: the container runs but is not ready, with
 * `Unhealthy` Events; readiness-probes.ts); containers that ignore SIGTERM (`slowStop`: a stop
 * takes the whole grace period and ends in exit code 137). The `exit` and `stop-seconds`
 * annotations win over them.
 *
 * Its runtime "writes" each container's life to the container's log, each line stamped in whole
 * seconds: `started container "web" (image nginx:1.27)` as it starts (a regular init container
 * then `container "init" exited with code 0 (Completed)`); `container "web" exited with code 1
 * (Error)` when it exits by itself; `restarted container "web" (image nginx:1.27), restart 1`
 * on each restart; `stopping container "web" (grace period 30s)` when its pod is terminated,
 * then `container "web" stopped with code 0 (Completed)` or, past the kill budget,
 * `container "web" killed with code 137 (Error)`. `appendContainerLog` adds lines of the
 * caller's. Each container's log is bounded (`maxLogBytesPerContainer`) and forgotten with its
 * pod.
 */
export function createSimulatedStatusProvider(options: SimulatedStatusProviderOptions = {}): SimulatedRuntime {
  const startDelayMs = options.startDelayMs ?? 1000;
  if (!(startDelayMs >= 0) || !Number.isFinite(startDelayMs)) {
    throw kpError('KP_ERR_STATUS_OPTIONS', ['startDelayMs', String(options.startDelayMs)]);
  }
  if (options.hostIP !== undefined && parseIP(options.hostIP) === undefined) {
    throw kpError('KP_ERR_STATUS_OPTIONS', ['hostIP', JSON.stringify(options.hostIP)]);
  }
  const cidr = options.podCIDR ?? DEFAULT_POD_CIDR;
  const addresses = createPodAddressAllocator({
    cidr,
    reserved: options.hostIP !== undefined ? [options.hostIP] : [],
  });
  for (const key of ['stopMs', 'startJitterMs'] as const) {
    const v = options[key];
    if (v !== undefined && !(v >= 0 && Number.isFinite(v))) throw kpError('KP_ERR_STATUS_OPTIONS', [key, String(v)]);
  }
  const scenarios = options.scenarios ?? [];
  const nodeLabels = options.nodeLabels ?? (() => undefined);
  return new SimulatedStatusProvider(
    startDelayMs,
    options.clock ?? realClock,
    addresses,
    {
      hostIP: options.hostIP,
      recursiveReadOnlyMounts: options.recursiveReadOnlyMounts ?? false,
      stopMs: options.stopMs ?? 0,
      startJitterMs: options.startJitterMs ?? 0,
      clusterDNS: (options.clusterDNS ?? []).length > 0,
    },
    createContainerLogBuffer({ maxBytesPerContainer: options.maxLogBytesPerContainer ?? DEFAULT_CONTAINER_LOG_BYTES }),
    createExitedContainers({ clock: options.clock ?? realClock, shouldPodContentBeRemoved: options.shouldPodContentBeRemoved }),
    (pod) => podPlan(scenarios, pod, nodeLabels),
    options.onRangeFull === undefined ? undefined : () => options.onRangeFull!({ cidr, capacity: addresses.capacity }),
  );
}
