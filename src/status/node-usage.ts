/**
 * What a node and its running containers use at one moment: the contract between whatever
 * measures or simulates usage (the simulated runtime's src/runtime/resource-usage.ts) and the
 * endpoints that report it as the kubelet does (`/stats/summary`, `/metrics/resource` in
 * src/server/). The kubelet gets the same numbers from cAdvisor or the CRI.
 *
 * CPU is given twice, as the kubelet's stats do: a counter of core-nanoseconds since the
 * container (or node) started, and the current rate in nanocores.
 */
export interface CpuMemoryUsage {
  /** CPU time used since the start, in core-nanoseconds; never decreases for one instance. */
  readonly cpuCoreNanoSeconds: number;
  /** The current CPU rate, in nanocores (1e9 is one core). */
  readonly cpuNanoCores: number;
  /** The memory working set, in bytes. */
  readonly workingSetBytes: number;
}

export interface ContainerUsage extends CpuMemoryUsage {
  readonly name: string;
  /** When this instance of the container started. */
  readonly startTime: Date;
  /** The container's memory limit in bytes, when it has one. */
  readonly memoryLimitBytes?: number;
}

export interface PodUsage extends CpuMemoryUsage {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  /** The pod's start (its status's startTime). */
  readonly startTime: Date;
  /** Its running containers, in spec order (sidecars first). */
  readonly containers: readonly ContainerUsage[];
  /** The sum of its containers' memory limits, when every one has a limit. */
  readonly memoryLimitBytes?: number;
}

export interface NodeUsage extends CpuMemoryUsage {
  /** When the numbers were taken. */
  readonly time: Date;
  /** When the node (the agent) started. */
  readonly startTime: Date;
  /** The Node's memory capacity in bytes, when known. */
  readonly memoryCapacityBytes?: number;
  /** The node's own share beside its pods (the kubelet, the runtime, the system). */
  readonly system: CpuMemoryUsage;
  /** The pods' share: the sum of `pods`. */
  readonly podsTotal: CpuMemoryUsage;
  /** The pods with at least one running container. */
  readonly pods: readonly PodUsage[];
}
