import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { kpError } from '../errors.js';

/**
 * The agent's metrics. The first two carry the kubelet's names and meaning; the rest are
 * kubelet-pods' own (`kubelet_pods_` prefix) and have no kubelet counterpart.
 */
export interface AgentMetrics {
  /** `kubelet_mirror_pods`: mirror pods the agent will try to create, one per admitted static pod. */
  readonly mirrorPods: Gauge;
  /** `kubelet_desired_pods{static}`: pods the agent is told to run; static="true" or "". */
  readonly desiredPods: Gauge<'static'>;
  readonly mirrorOperations: Counter<'operation' | 'result'>;
  readonly syncDuration: Histogram;
  readonly sourceErrors: Counter<'source'>;
  readonly statusWrites: Counter<'result'>;
  /** `kubelet_active_pods{static}`: pods counted at admission (admitted, not finished). */
  readonly activePods: Gauge<'static'>;
  /** `kubelet_working_pods{lifecycle,config,static}`: pods the pod workers run, by phase of their life. */
  readonly workingPods: Gauge<'lifecycle' | 'config' | 'static'>;
  /** `kubelet_restarted_pods_total{static}`: pods started again with the same UID after they stopped. */
  readonly restartedPods: Counter<'static'>;
  readonly events: Counter<'result'>;

  setMirrorPods(count: number): void;
  setDesiredPods(counts: { static: number; nonStatic: number }): void;
  /** e.g. `('create', 'success')`, `('delete', 'error')`. */
  recordMirrorOperation(operation: 'create' | 'delete' | 'delete-orphan', result: 'success' | 'error' | 'skipped'): void;
  /** Seconds one sync pass took. */
  observeSyncDuration(seconds: number): void;
  recordSourceError(source: string): void;
  recordStatusWrite(result: string): void;
  setActivePods(counts: { static: number; nonStatic: number }): void;
  /** Sets every lifecycle × config × static series; those missing from `counts` are 0. */
  setWorkingPods(counts: ReadonlyMap<string, number>): void;
  recordRestartedPod(isStatic: boolean): void;
  /** What became of one Kubernetes Event: created, patched, spam-filtered, dropped. */
  recordEvent(result: string): void;
}

export const AGENT_METRIC_NAMES = Object.freeze([
  'kubelet_mirror_pods',
  'kubelet_desired_pods',
  'kubelet_pods_mirror_operations_total',
  'kubelet_pods_sync_duration_seconds',
  'kubelet_pods_source_errors_total',
  'kubelet_pods_status_writes_total',
  'kubelet_active_pods',
  'kubelet_working_pods',
  'kubelet_restarted_pods_total',
  'kubelet_pods_events_total',
] as const);

/** Registers the agent's metrics on `registry`; fails with KP_ERR_METRIC_REGISTERED if one is taken. */
export function createAgentMetrics(registry: Registry): AgentMetrics {
  for (const name of AGENT_METRIC_NAMES) {
    if (registry.getSingleMetric(name)) throw kpError('KP_ERR_METRIC_REGISTERED', [name]);
  }
  const registers = [registry];
  const mirrorPods = new Gauge({
    name: 'kubelet_mirror_pods',
    help: 'Mirror pods this node is expected to keep in the API server: one for each static pod it runs.',
    registers,
  });
  const desiredPods = new Gauge({
    name: 'kubelet_desired_pods',
    help: 'Pods this node has been told to run; static="true" counts pods from files or URLs, static="" the rest.',
    labelNames: ['static'] as const,
    registers,
  });
  const mirrorOperations = new Counter({
    name: 'kubelet_pods_mirror_operations_total',
    help: 'Mirror pod creations and deletions sent to the API server, by operation and result (kubelet-pods).',
    labelNames: ['operation', 'result'] as const,
    registers,
  });
  const syncDuration = new Histogram({
    name: 'kubelet_pods_sync_duration_seconds',
    help: 'Duration of one mirror pod sync pass in seconds (kubelet-pods).',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
    registers,
  });
  const sourceErrors = new Counter({
    name: 'kubelet_pods_source_errors_total',
    help: 'Errors reading static pod sources, by source (kubelet-pods).',
    labelNames: ['source'] as const,
    registers,
  });
  const statusWrites = new Counter({
    name: 'kubelet_pods_status_writes_total',
    help: 'Mirror pod status writes, by result (kubelet-pods).',
    labelNames: ['result'] as const,
    registers,
  });
  const activePods = new Gauge({
    name: 'kubelet_active_pods',
    help: 'The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.',
    labelNames: ['static'] as const,
    registers,
  });
  const workingPods = new Gauge({
    name: 'kubelet_working_pods',
    help: 'Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is desired or orphaned, and whether the pod is static.',
    labelNames: ['lifecycle', 'config', 'static'] as const,
    registers,
  });
  const restartedPods = new Counter({
    name: 'kubelet_restarted_pods_total',
    help: 'Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)',
    labelNames: ['static'] as const,
    registers,
  });
  const events = new Counter({
    name: 'kubelet_pods_events_total',
    help: 'Kubernetes Events recorded, by what became of them: created, patched (a repeat), spam-filtered, dropped (kubelet-pods).',
    labelNames: ['result'] as const,
    registers,
  });
  // Housekeeping sets these every 2 s for every node of a fleet; most of the time to the value
  // they already have, and prom-client hashes the labels of each set.
  const working = ['sync', 'terminating', 'terminated'].flatMap((lifecycle) =>
    ['desired', 'orphan'].flatMap((config) =>
      ['true', ''].map((isStatic) => ({ key: `${lifecycle}|${config}|${isStatic}`, set: seriesSetter(workingPods, { lifecycle, config, static: isStatic }) })),
    ),
  );
  const activeByStatic = byStaticSetter(activePods);
  const desiredByStatic = byStaticSetter(desiredPods);
  const mirrorCount = seriesSetter(mirrorPods);
  return Object.freeze({
    activePods,
    workingPods,
    restartedPods,
    setActivePods: activeByStatic,
    setWorkingPods: (counts: ReadonlyMap<string, number>) => {
      for (const series of working) series.set(counts.get(series.key) ?? 0);
    },
    recordRestartedPod: (isStatic: boolean) => restartedPods.inc({ static: isStatic ? 'true' : '' }),
    mirrorPods,
    desiredPods,
    mirrorOperations,
    syncDuration,
    sourceErrors,
    statusWrites,
    events,
    setMirrorPods: mirrorCount,
    setDesiredPods: desiredByStatic,
    recordMirrorOperation: (operation: Parameters<AgentMetrics['recordMirrorOperation']>[0], result: Parameters<AgentMetrics['recordMirrorOperation']>[1]) =>
      mirrorOperations.inc({ operation, result }),
    observeSyncDuration: (seconds: number) => syncDuration.observe(seconds),
    recordSourceError: (source: string) => sourceErrors.inc({ source }),
    recordStatusWrite: (result: string) => statusWrites.inc({ result }),
    recordEvent: (result: string) => events.inc({ result }),
  });
}

/**
 * Sets one series of a gauge, skipping a set to the value it was last given here. The agent's
 * gauges are only ever set through these, so the value remembered is the series' value.
 */
function seriesSetter<L extends string>(gauge: Gauge<L>, labels?: Partial<Record<L, string>>): (value: number) => void {
  let last: number | undefined;
  return (value) => {
    if (value === last) return;
    last = value;
    if (labels === undefined) gauge.set(value);
    else gauge.set(labels, value);
  };
}

/** A gauge with the kubelet's `static` label: "true" for pods from files or URLs, "" for the rest. */
function byStaticSetter(gauge: Gauge<'static'>): (counts: { static: number; nonStatic: number }) => void {
  const staticSeries = seriesSetter(gauge, { static: 'true' });
  const otherSeries = seriesSetter(gauge, { static: '' });
  return (counts) => {
    staticSeries(counts.static);
    otherSeries(counts.nonStatic);
  };
}
