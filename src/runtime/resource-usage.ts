import { createHash } from 'node:crypto';
import type { V1Container, V1ContainerStatus, V1PodStatus } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { noopLogger, type Logger } from '../logger.js';
import type { Pod } from '../pod/types.js';
import type { ContainerUsage, CpuMemoryUsage, NodeUsage, PodUsage } from '../status/node-usage.js';
import type { Clock } from '../time/clock.js';
import { formatPod } from '../values/pod-format.js';
import { quantityValue } from '../values/quantity.js';
import { SIMULATION_ANNOTATIONS } from './simulation-annotations.js';
import { concernsContainer, podBehaviours, type NodeLabelsOf } from '../scenario/select.js';
import type { Scenario, UsageAmount } from '../scenario/scenario-types.js';
import { usagePlan, type UsageEntry } from './usage-annotation.js';

/** A container's simulated use: CPU in cores (a rate), memory in bytes (a working set). */
export interface UsageRate {
  readonly cpuCores: number;
  readonly memoryBytes: number;
}

/**
 * Asked first for each running container (the hook of a scenario driving a workload): its
 * usage now, or undefined to leave it to the annotation and the default.
 */
export type UsageOverride = (pod: Pod, container: V1Container) => UsageRate | undefined;

/** The share of a container's requests it uses by default. */
export const DEFAULT_USAGE_SHARE = 0.5;
/** Each container's default usage is off the share by up to this fraction, fixed per container. */
export const USAGE_NOISE = 0.1;
/** What a container uses of a resource it requests nothing of (an idle process). */
export const IDLE_USAGE: UsageRate = Object.freeze({ cpuCores: 0.001, memoryBytes: 8 * 2 ** 20 });
/** The node's own use beside its pods (the kubelet, the runtime, the system). */
export const SYSTEM_USAGE: UsageRate = Object.freeze({ cpuCores: 0.05, memoryBytes: 256 * 2 ** 20 });

export interface ResourceUsageOptions {
  clock: Clock;
  /** The share of the requests a container uses by default; DEFAULT_USAGE_SHARE. */
  share?: number;
  /** The scenarios' hook; see UsageOverride. */
  override?: UsageOverride;
  /** The node's own use; SYSTEM_USAGE. */
  system?: UsageRate;
  /** When the node started; the model's creation by default. */
  startTime?: Date;
  /** Told once per pod and annotation value about annotation entries it cannot read. */
  logger?: Logger;
  /** The configured scenarios, whose `usage` behaviours apply where a pod's annotation says nothing. */
  scenarios?: readonly Scenario[];
  /** The labels of a node by name, for the scenarios' `nodeLabels`. */
  nodeLabels?: NodeLabelsOf;
}

/** A pod and the status it was last published with (whose running containers report). */
export interface PodAndStatus {
  readonly pod: Pod;
  readonly status: V1PodStatus | undefined;
}

/** The Node's capacity, as far as it is known. */
export interface NodeCapacity {
  readonly memoryBytes?: number;
}

/** One node's simulated resource usage (docs/lifecycle.md, "Resource usage"). */
export interface ResourceUsage {
  /** What the container uses now: the hook's answer, else the annotation's, else the default. */
  rateOf(pod: Pod, container: V1Container): UsageRate;
  /**
   * The node and the running containers of `pods` now, on the clock. CPU counters grow at each
   * container's rate from its start (a restarted container starts again from 0); only what is
   * measured here is remembered, so a container not passed is forgotten.
   */
  measure(pods: Iterable<PodAndStatus>, capacity: NodeCapacity): NodeUsage;
}

interface Counter {
  startMs: number;
  atMs: number;
  /** core-nanoseconds so far */
  total: number;
  /** nanocores since atMs */
  rate: number;
}

export function createResourceUsage(options: ResourceUsageOptions): ResourceUsage {
  const { clock } = options;
  const share = options.share ?? DEFAULT_USAGE_SHARE;
  const system = options.system ?? SYSTEM_USAGE;
  const logger = options.logger ?? noopLogger;
  const startMs = (options.startTime ?? clock.now()).getTime();
  const counters = new Map<string, Counter>();
  // The annotation value last warned about, per pod UID: each bad value is told once.
  const warned = new Map<string, string>();

  const defaultOf = (pod: Pod, c: V1Container, resource: 'cpu' | 'memory'): number => {
    const request = requestOf(c, resource);
    if (request === undefined) return resource === 'cpu' ? IDLE_USAGE.cpuCores : IDLE_USAGE.memoryBytes;
    return request * share * noiseFactor(pod.metadata?.uid ?? '', c.name, resource);
  };
  const amountOf = (pod: Pod, c: V1Container, resource: 'cpu' | 'memory', asked: UsageAmount | undefined): number => {
    if (asked === undefined) return defaultOf(pod, c, resource);
    if ('amount' in asked) return asked.amount;
    const request = requestOf(c, resource);
    return request === undefined ? defaultOf(pod, c, resource) : request * asked.ofRequest;
  };
  const planned = (pod: Pod, name: string): UsageEntry | undefined => {
    const plan = usagePlan(pod);
    const uid = pod.metadata?.uid ?? '';
    const raw = pod.metadata?.annotations?.[SIMULATION_ANNOTATIONS.usage] ?? '';
    if (plan.problems.length > 0 && warned.get(uid) !== raw) {
      warned.set(uid, raw);
      logger.warn({ err: kpError('KP_ERR_SIMULATION_ANNOTATION', [formatPod(pod), SIMULATION_ANNOTATIONS.usage, plan.problems]) }, 'annotation entries ignored');
    }
    return plan.entries.get(name) ?? plan.entries.get('*') ?? scenarioEntry(pod, name);
  };
  // The first `usage` scenario that picks the pod and concerns the container, as the other
  // container behaviours are chosen (docs/lifecycle.md, "Scenarios").
  const scenarios = (options.scenarios ?? []).filter((s) => s.behaviour.kind === 'usage');
  const nodeLabels = options.nodeLabels ?? (() => undefined);
  const scenarioEntry = (pod: Pod, name: string): UsageEntry | undefined => {
    if (scenarios.length === 0) return undefined;
    const image = pod.spec?.containers?.find((c) => c.name === name)?.image ?? '';
    for (const picked of podBehaviours(scenarios, pod, nodeLabels)) {
      const b = picked.behaviour;
      if (b.kind === 'usage' && concernsContainer(picked, name, image)) return { ...(b.cpu !== undefined ? { cpu: b.cpu } : {}), ...(b.memory !== undefined ? { memory: b.memory } : {}) };
    }
    return undefined;
  };
  // Pods are immutable once handed over, so what the annotation and the default give each
  // container is worked out once per pod object; the hook is asked every time.
  const plannedRates = new WeakMap<Pod, Map<string, UsageRate>>();
  const plannedRate = (pod: Pod, c: V1Container): UsageRate => {
    let rates = plannedRates.get(pod);
    if (rates === undefined) plannedRates.set(pod, (rates = new Map()));
    let rate = rates.get(c.name);
    if (rate === undefined) {
      const entry = planned(pod, c.name);
      rate = withinLimits(c, { cpuCores: amountOf(pod, c, 'cpu', entry?.cpu), memoryBytes: amountOf(pod, c, 'memory', entry?.memory) });
      rates.set(c.name, rate);
    }
    return rate;
  };
  const rateOf = (pod: Pod, c: V1Container): UsageRate => {
    const hooked = options.override?.(pod, c);
    return hooked !== undefined ? withinLimits(c, hooked) : plannedRate(pod, c);
  };
  // Moves a counter to now at the rate of its last reading; a new one (or a new start) begins at `initial`.
  const advance = (key: string, fromMs: number, nowMs: number, nanoCores: number, initial: number): number => {
    const c = counters.get(key);
    const total = c === undefined || c.startMs !== fromMs ? initial : c.total + (c.rate * Math.max(0, nowMs - c.atMs)) / 1000;
    counters.set(key, { startMs: fromMs, atMs: nowMs, total, rate: nanoCores });
    seen.add(key);
    return Math.round(total);
  };
  let seen = new Set<string>();

  return {
    rateOf,
    measure(items, capacity) {
      const now = clock.now();
      const nowMs = now.getTime();
      seen = new Set<string>();
      const pods: PodUsage[] = [];
      for (const { pod, status } of items) {
        const uid = pod.metadata?.uid ?? '';
        const containers: ContainerUsage[] = [];
        for (const { spec, startedAt } of runningContainers(pod, status)) {
          const rate = rateOf(pod, spec);
          const nanoCores = Math.round(rate.cpuCores * 1e9);
          const limit = limitOf(spec, 'memory');
          containers.push({
            name: spec.name,
            startTime: new Date(startedAt),
            cpuCoreNanoSeconds: advance(`container/${uid}/${spec.name}`, startedAt, nowMs, nanoCores, (nanoCores * Math.max(0, nowMs - startedAt)) / 1000),
            cpuNanoCores: nanoCores,
            workingSetBytes: Math.round(rate.memoryBytes),
            ...(limit !== undefined ? { memoryLimitBytes: limit } : {}),
          });
        }
        if (containers.length === 0) continue;
        const limits = containers.map((c) => c.memoryLimitBytes);
        const startTime = new Date(status?.startTime ?? Math.min(...containers.map((c) => c.startTime.getTime())));
        const total = sum(containers);
        // The pod's counter goes on when one of its containers restarts, as its cgroup's does.
        const cpuCoreNanoSeconds = advance(`pod/${uid}`, startTime.getTime(), nowMs, total.cpuNanoCores, total.cpuCoreNanoSeconds);
        pods.push({
          name: pod.metadata?.name ?? '',
          namespace: pod.metadata?.namespace ?? '',
          uid,
          startTime,
          containers,
          ...total,
          cpuCoreNanoSeconds,
          ...(limits.every((l) => l !== undefined) ? { memoryLimitBytes: limits.reduce((a, b) => a + b, 0) } : {}),
        });
      }
      const current = sum(pods);
      const podsTotal: CpuMemoryUsage = { ...current, cpuCoreNanoSeconds: advance('node/pods', startMs, nowMs, current.cpuNanoCores, current.cpuCoreNanoSeconds) };
      for (const key of counters.keys()) if (!seen.has(key)) counters.delete(key);
      const uids = new Set(pods.map((p) => p.uid));
      for (const uid of warned.keys()) if (!uids.has(uid)) warned.delete(uid);
      const systemNanoCores = Math.round(system.cpuCores * 1e9);
      const systemUsage: CpuMemoryUsage = {
        cpuCoreNanoSeconds: Math.round((systemNanoCores * Math.max(0, nowMs - startMs)) / 1000),
        cpuNanoCores: systemNanoCores,
        workingSetBytes: Math.round(system.memoryBytes),
      };
      return {
        time: now,
        startTime: new Date(startMs),
        ...sum([podsTotal, systemUsage]),
        ...(capacity.memoryBytes !== undefined ? { memoryCapacityBytes: capacity.memoryBytes } : {}),
        system: systemUsage,
        podsTotal,
        pods,
      };
    },
  };
}

/** The running containers of a pod as its status shows them (sidecars first), with their start. */
function* runningContainers(pod: Pod, status: V1PodStatus | undefined): Generator<{ spec: V1Container; startedAt: number }> {
  const running = (statuses: V1ContainerStatus[] | undefined, specs: V1Container[] | undefined) =>
    (statuses ?? []).flatMap((s) => {
      const started = s.state?.running?.startedAt;
      const spec = specs?.find((c) => c.name === s.name);
      return started === undefined || spec === undefined ? [] : [{ spec, startedAt: new Date(started).getTime() }];
    });
  yield* running(status?.initContainerStatuses, pod.spec?.initContainers);
  yield* running(status?.containerStatuses, pod.spec?.containers);
}

/** A container is throttled at its CPU limit, and cannot hold more memory than its limit. */
function withinLimits(c: V1Container, rate: UsageRate): UsageRate {
  return {
    cpuCores: Math.max(0, Math.min(finite(rate.cpuCores), limitOf(c, 'cpu') ?? Infinity)),
    memoryBytes: Math.max(0, Math.min(finite(rate.memoryBytes), limitOf(c, 'memory') ?? Infinity)),
  };
}

function sum(items: readonly CpuMemoryUsage[]): CpuMemoryUsage {
  let cpuCoreNanoSeconds = 0;
  let cpuNanoCores = 0;
  let workingSetBytes = 0;
  for (const u of items) {
    cpuCoreNanoSeconds += u.cpuCoreNanoSeconds;
    cpuNanoCores += u.cpuNanoCores;
    workingSetBytes += u.workingSetBytes;
  }
  return { cpuCoreNanoSeconds, cpuNanoCores, workingSetBytes };
}

function requestOf(c: V1Container, resource: 'cpu' | 'memory'): number | undefined {
  return quantityOf(c.resources?.requests?.[resource]);
}

function limitOf(c: V1Container, resource: 'cpu' | 'memory'): number | undefined {
  return quantityOf(c.resources?.limits?.[resource]);
}

function quantityOf(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const n = quantityValue(String(value));
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function finite(n: number): number {
  return Number.isFinite(n) ? n : 0;
}

/** 1 ± USAGE_NOISE, fixed by the pod's UID, the container's name and the resource. */
function noiseFactor(uid: string, container: string, resource: string): number {
  const f = createHash('sha256').update(`${uid}\0${container}\0${resource}`).digest().readUInt32BE(0) / 2 ** 32;
  return 1 + USAGE_NOISE * (2 * f - 1);
}
