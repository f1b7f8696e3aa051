import type { ContainerUsage, CpuMemoryUsage, NodeUsage, PodUsage } from '../status/node-usage.js';
import { send, type Route } from './server.js';

/**
 * The kubelet's Summary API (`k8s.io/kubelet/pkg/apis/stats/v1alpha1`), the part a simulated
 * node has numbers for: CPU and memory of the node, its system containers, its pods and their
 * containers. Fields are declared in the Go types' order, which is the order the kubelet's JSON
 * has them in. Times are Dates here (to the millisecond, which /metrics/resource writes); their
 * JSON is the API's RFC 3339 seconds.
 */
export interface StatsSummary {
  readonly node: NodeStats;
  readonly pods: readonly PodStats[];
}

export interface NodeStats {
  readonly nodeName: string;
  readonly systemContainers: readonly ContainerStats[];
  readonly startTime: Date;
  readonly cpu: CPUStats;
  readonly memory: MemoryStats;
}

export interface PodStats {
  readonly podRef: { readonly name: string; readonly namespace: string; readonly uid: string };
  readonly startTime: Date;
  readonly containers: readonly ContainerStats[];
  readonly cpu: CPUStats;
  readonly memory: MemoryStats;
}

export interface ContainerStats {
  readonly name: string;
  readonly startTime: Date;
  readonly cpu: CPUStats;
  readonly memory: MemoryStats;
}

export interface CPUStats {
  readonly time: Date;
  readonly usageNanoCores: number;
  readonly usageCoreNanoSeconds: number;
}

export interface MemoryStats {
  readonly time: Date;
  /** The limit (or the Node's capacity) less the working set; only where there is a limit. */
  readonly availableBytes?: number;
  readonly usageBytes: number;
  readonly workingSetBytes: number;
  readonly rssBytes: number;
  readonly pageFaults: number;
  readonly majorPageFaults: number;
}

/** The Summary of a node's usage, as the kubelet's summary provider assembles it. */
export function statsSummary(nodeName: string, usage: NodeUsage): StatsSummary {
  const time = apiTime(usage.time);
  const startTime = apiTime(usage.startTime);
  return {
    node: {
      nodeName,
      // The kubelet's own cgroup and the pods' one (kubepods), as the kubelet lists them.
      systemContainers: [
        { name: 'kubelet', startTime, ...cpuMemory(usage.system, time, undefined) },
        { name: 'pods', startTime, ...cpuMemory(usage.podsTotal, time, usage.memoryCapacityBytes) },
      ],
      startTime,
      ...cpuMemory(usage, time, usage.memoryCapacityBytes),
    },
    pods: usage.pods.map((pod) => podStats(pod, time)),
  };
}

function podStats(pod: PodUsage, time: Date): PodStats {
  return {
    podRef: { name: pod.name, namespace: pod.namespace, uid: pod.uid },
    startTime: apiTime(pod.startTime),
    containers: pod.containers.map((c) => containerStats(c, time)),
    ...cpuMemory(pod, time, pod.memoryLimitBytes),
  };
}

function containerStats(c: ContainerUsage, time: Date): ContainerStats {
  return { name: c.name, startTime: apiTime(c.startTime), ...cpuMemory(c, time, c.memoryLimitBytes) };
}

function cpuMemory(u: CpuMemoryUsage, time: Date, limitBytes: number | undefined): { cpu: CPUStats; memory: MemoryStats } {
  return {
    cpu: { time, usageNanoCores: u.cpuNanoCores, usageCoreNanoSeconds: u.cpuCoreNanoSeconds },
    memory: {
      time,
      ...(limitBytes !== undefined ? { availableBytes: Math.max(0, limitBytes - u.workingSetBytes) } : {}),
      // Without a page cache to simulate, all of the usage is working set, and all of it RSS.
      usageBytes: u.workingSetBytes,
      workingSetBytes: u.workingSetBytes,
      rssBytes: u.workingSetBytes,
      pageFaults: 0,
      majorPageFaults: 0,
    },
  };
}

/** A time that marshals as metav1.Time does: RFC 3339 in whole seconds, UTC. */
class ApiTime extends Date {
  override toJSON(): string {
    return `${this.toISOString().slice(0, 19)}Z`;
  }
}

const apiTime = (d: Date): Date => new ApiTime(d.getTime());

/**
 * The Summary as the kubelet writes it (go-restful's indented JSON: one space per level, no
 * newline at the end), every time in whole seconds as metav1.Time marshals it.
 */
export function statsSummaryJSON(summary: StatsSummary): string {
  return JSON.stringify(summary, null, 1);
}

/**
 * `/stats/summary` → the node's Summary. The kubelet's `only_cpu_and_memory=true` leaves out
 * what this Summary never has (network, filesystems, rlimits), so it answers both the same.
 */
export function statsSummaryRoute(options: { nodeName: string; usage: () => NodeUsage }): Route {
  return {
    path: '/stats/summary',
    handle: (_req, res) => {
      send(res, 200, 'application/json', statsSummaryJSON(statsSummary(options.nodeName, options.usage())));
    },
  };
}
