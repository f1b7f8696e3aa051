import type { Registry } from 'prom-client';
import { kpError } from '../errors.js';

/**
 * The agent's metrics. `kubelet_mirror_pods`, `kubelet_desired_pods`, `kubelet_active_pods`,
 * `kubelet_working_pods` and `kubelet_restarted_pods_total` carry the kubelet's names and
 * meaning; the rest are kubelet-pods' own (`kubelet_pods_` prefix) and have no kubelet counterpart.
 *
 * The values are plain numbers of this node, turned into series only when a registry that shows
 * them is scraped (src/server/agent-metrics-view.ts): a fleet holds one such object per node and
 * one set of series for all nodes, labelled by node, instead of a prom-client metric per node.
 */
export interface AgentMetrics {
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
  /**
   * The series of metric `name` (one of AGENT_METRIC_NAMES) in prom-client's JSON form, each
   * with `labels` after its own; what prom-client's metric of that kind would show.
   */
  series(name: AgentMetricName, labels: Readonly<Record<string, string>>): SeriesValue[];
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

export type AgentMetricName = (typeof AGENT_METRIC_NAMES)[number];

/** What a scrape says of each metric besides its series. */
export const AGENT_METRIC_HELP: Readonly<Record<AgentMetricName, { help: string; type: 'gauge' | 'counter' | 'histogram' }>> = Object.freeze({
  kubelet_mirror_pods: { type: 'gauge', help: 'Mirror pods this node is expected to keep in the API server: one for each static pod it runs.' },
  kubelet_desired_pods: { type: 'gauge', help: 'Pods this node has been told to run; static="true" counts pods from files or URLs, static="" the rest.' },
  kubelet_pods_mirror_operations_total: { type: 'counter', help: 'Mirror pod creations and deletions sent to the API server, by operation and result (kubelet-pods).' },
  kubelet_pods_sync_duration_seconds: { type: 'histogram', help: 'Duration of one mirror pod sync pass in seconds (kubelet-pods).' },
  kubelet_pods_source_errors_total: { type: 'counter', help: 'Errors reading static pod sources, by source (kubelet-pods).' },
  kubelet_pods_status_writes_total: { type: 'counter', help: 'Mirror pod status writes, by result (kubelet-pods).' },
  kubelet_active_pods: {
    type: 'gauge',
    help: 'The number of pods the kubelet considers active and which are being considered when admitting new pods. static is true if the pod is not from the apiserver.',
  },
  kubelet_working_pods: {
    type: 'gauge',
    help: 'Number of pods the kubelet is actually running, broken down by lifecycle phase, whether the pod is desired or orphaned, and whether the pod is static.',
  },
  kubelet_restarted_pods_total: {
    type: 'counter',
    help: 'Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)',
  },
  kubelet_pods_events_total: {
    type: 'counter',
    help: 'Kubernetes Events recorded, by what became of them: created, patched (a repeat), spam-filtered, dropped (kubelet-pods).',
  },
});

/** The upper bounds of `kubelet_pods_sync_duration_seconds`. */
const SYNC_BUCKETS = Object.freeze([0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10]);

/** `kubelet_working_pods`' series, in the order they are shown; `key` is how setWorkingPods' counts name them. */
const WORKING_SERIES = Object.freeze(
  ['sync', 'terminating', 'terminated'].flatMap((lifecycle) =>
    ['desired', 'orphan'].flatMap((config) => ['true', ''].map((isStatic) => Object.freeze({ key: `${lifecycle}|${config}|${isStatic}`, labels: Object.freeze({ lifecycle, config, static: isStatic }) }))),
  ),
);

/** The kubelet's `static` label: "true" for pods from files or URLs, "" for the rest. */
const STATIC_LABELS = Object.freeze([Object.freeze({ static: 'true' }), Object.freeze({ static: '' })]);

/**
 * The agent's metric values, on `registry` when given (`kubelet-pods run`: its /metrics shows
 * them); fails with KP_ERR_METRIC_REGISTERED if one of the names is taken there. Without a
 * registry the values are only kept, for a view that shows many nodes (the fleet).
 */
export function createAgentMetrics(registry?: Registry): AgentMetrics {
  if (registry !== undefined) {
    for (const name of AGENT_METRIC_NAMES) {
      if (registry.getSingleMetric(name)) throw kpError('KP_ERR_METRIC_REGISTERED', [name]);
    }
  }
  const metrics = new AgentMetricValues();
  if (registry !== undefined) {
    for (const name of AGENT_METRIC_NAMES) registry.registerMetric(agentMetricView(name, () => [{ labels: {}, metrics }]) as never);
  }
  return metrics;
}

/** One node's metrics as seen by a view: its values and the labels its series get (a fleet's `node`). */
export interface LabelledAgentMetrics {
  readonly labels: Readonly<Record<string, string>>;
  readonly metrics: AgentMetrics;
}

/**
 * A metric for a prom-client registry that shows `name` of every node `nodes()` lists, read at
 * each scrape: prom-client's registries take any object of this shape (its aggregator makes
 * the same), and it holds nothing between scrapes.
 */
export function agentMetricView(name: AgentMetricName, nodes: () => Iterable<LabelledAgentMetrics>) {
  const { help, type } = AGENT_METRIC_HELP[name];
  const get = (): MetricSnapshot => {
    const values: SeriesValue[] = [];
    for (const node of nodes()) values.push(...node.metrics.series(name, node.labels));
    return { name, help, type, values, aggregator: 'sum' };
  };
  return { name, help, type, aggregator: 'sum' as const, get, reset: () => undefined };
}

type Counts = Map<string, number>;

/** One series as prom-client's `get()` gives it (a histogram's name its `_bucket`, `_sum` or `_count`). */
export interface SeriesValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** A metric as prom-client's `get()` gives it (its types say `type` is an enum; it is this string). */
export interface MetricSnapshot {
  name: string;
  help: string;
  type: 'gauge' | 'counter' | 'histogram';
  values: SeriesValue[];
  aggregator: 'sum';
}

/**
 * The values, as plain fields: a node that has done nothing holds a handful of numbers. Series
 * that prom-client shows only once set (those with labels) are undefined until then.
 */
class AgentMetricValues implements AgentMetrics {
  #mirrorPods = 0;
  #desired: [number, number] | undefined;
  #active: [number, number] | undefined;
  #working: number[] | undefined;
  #restarted: Counts | undefined;
  #mirrorOperations: Counts | undefined;
  #sourceErrors: Counts | undefined;
  #statusWrites: Counts | undefined;
  #events: Counts | undefined;
  /** Per bucket (not cumulative), then the sum and the count. */
  #sync: { buckets: number[]; sum: number; count: number } | undefined;

  setMirrorPods(count: number): void {
    this.#mirrorPods = count;
  }
  setDesiredPods(counts: { static: number; nonStatic: number }): void {
    this.#desired = [counts.static, counts.nonStatic];
  }
  setActivePods(counts: { static: number; nonStatic: number }): void {
    this.#active = [counts.static, counts.nonStatic];
  }
  setWorkingPods(counts: ReadonlyMap<string, number>): void {
    const working = (this.#working ??= new Array<number>(WORKING_SERIES.length).fill(0));
    for (let i = 0; i < WORKING_SERIES.length; i++) working[i] = counts.get(WORKING_SERIES[i]!.key) ?? 0;
  }
  recordRestartedPod(isStatic: boolean): void {
    this.#restarted = increment(this.#restarted, isStatic ? 'true' : '');
  }
  recordMirrorOperation(operation: string, result: string): void {
    this.#mirrorOperations = increment(this.#mirrorOperations, `${operation}|${result}`);
  }
  recordSourceError(source: string): void {
    this.#sourceErrors = increment(this.#sourceErrors, source);
  }
  recordStatusWrite(result: string): void {
    this.#statusWrites = increment(this.#statusWrites, result);
  }
  recordEvent(result: string): void {
    this.#events = increment(this.#events, result);
  }
  observeSyncDuration(seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    const sync = (this.#sync ??= { buckets: new Array<number>(SYNC_BUCKETS.length).fill(0), sum: 0, count: 0 });
    const bucket = SYNC_BUCKETS.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) sync.buckets[bucket]!++;
    sync.sum += seconds;
    sync.count++;
  }

  series(name: AgentMetricName, labels: Readonly<Record<string, string>>): SeriesValue[] {
    switch (name) {
      case 'kubelet_mirror_pods':
        return [{ value: this.#mirrorPods, labels: { ...labels } }];
      case 'kubelet_desired_pods':
        return byStatic(this.#desired, labels);
      case 'kubelet_active_pods':
        return byStatic(this.#active, labels);
      case 'kubelet_working_pods': {
        const working = this.#working;
        return working === undefined ? [] : WORKING_SERIES.map((s, i) => ({ value: working[i]!, labels: { ...s.labels, ...labels } }));
      }
      case 'kubelet_restarted_pods_total':
        return counted(this.#restarted, ['static'], labels);
      case 'kubelet_pods_mirror_operations_total':
        return counted(this.#mirrorOperations, ['operation', 'result'], labels);
      case 'kubelet_pods_source_errors_total':
        return counted(this.#sourceErrors, ['source'], labels);
      case 'kubelet_pods_status_writes_total':
        return counted(this.#statusWrites, ['result'], labels);
      case 'kubelet_pods_events_total':
        return counted(this.#events, ['result'], labels);
      case 'kubelet_pods_sync_duration_seconds':
        return this.#syncSeries(labels);
    }
  }

  /** As prom-client's histogram without labels: cumulative buckets (`le` a number, then "+Inf"), sum, count. */
  #syncSeries(labels: Readonly<Record<string, string>>): SeriesValue[] {
    const sync = this.#sync;
    const name = 'kubelet_pods_sync_duration_seconds';
    const values: SeriesValue[] = [];
    let cumulative = 0;
    SYNC_BUCKETS.forEach((bound, i) => {
      cumulative += sync?.buckets[i] ?? 0;
      values.push({ value: cumulative, metricName: `${name}_bucket`, labels: { le: bound, ...labels } });
    });
    const count = sync?.count ?? 0;
    values.push({ value: count, metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels } });
    values.push({ value: sync?.sum ?? 0, metricName: `${name}_sum`, labels: { ...labels } });
    values.push({ value: count, metricName: `${name}_count`, labels: { ...labels } });
    return values;
  }
}

function increment(counts: Counts | undefined, key: string): Counts {
  const map = counts ?? new Map<string, number>();
  map.set(key, (map.get(key) ?? 0) + 1);
  return map;
}

function byStatic(values: [number, number] | undefined, labels: Readonly<Record<string, string>>): SeriesValue[] {
  return values === undefined ? [] : STATIC_LABELS.map((own, i) => ({ value: values[i]!, labels: { ...own, ...labels } }));
}

/** A counter's series, in the order they were first counted; the key holds the label values joined by `|`. */
function counted(counts: Counts | undefined, labelNames: readonly string[], labels: Readonly<Record<string, string>>): SeriesValue[] {
  if (counts === undefined) return [];
  return [...counts].map(([key, value]) => {
    const parts = labelNames.length === 1 ? [key] : key.split('|');
    const own = Object.fromEntries(labelNames.map((label, i) => [label, parts[i]!]));
    return { value, labels: { ...own, ...labels } };
  });
}
