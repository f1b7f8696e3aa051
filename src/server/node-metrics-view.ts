import type { Registry } from 'prom-client';
import { kpError } from '../errors.js';
import { MANAGED_EPHEMERAL_CONTAINERS, MANAGED_EPHEMERAL_CONTAINERS_HELP } from '../pod/metrics.js';
import { AGENT_METRIC_NAMES, agentMetricView, type AgentMetrics, type MetricSnapshot } from './agent-metrics.js';

/** One node's metrics: the agent's values, its pod manager's gauge, and the labels its series get. */
export interface NodeMetricsEntry {
  readonly labels: Readonly<Record<string, string>>;
  readonly metrics: AgentMetrics;
  readonly podManager: { readonly managedEphemeralContainers: number };
}

/**
 * Shows on `registry` the series of every node `nodes()` lists, read at each scrape: the
 * agent's metrics, then the pod manager's `kubelet_managed_ephemeral_containers`, as one node's
 * registry held them. `kubelet-pods run` and each kubelet port of a fleet list their one node;
 * the fleet's /metrics lists all, labelled by node. Fails with KP_ERR_METRIC_REGISTERED if a
 * name is taken there.
 */
export function showNodeMetrics(registry: Registry, nodes: () => Iterable<NodeMetricsEntry>): Registry {
  for (const name of [...AGENT_METRIC_NAMES, MANAGED_EPHEMERAL_CONTAINERS]) {
    if (registry.getSingleMetric(name)) throw kpError('KP_ERR_METRIC_REGISTERED', [name]);
  }
  for (const name of AGENT_METRIC_NAMES) registry.registerMetric(agentMetricView(name, nodes) as never);
  registry.registerMetric(ephemeralContainersView(nodes) as never);
  return registry;
}

/** `kubelet_managed_ephemeral_containers` of each node: a gauge without labels of its own. */
function ephemeralContainersView(nodes: () => Iterable<NodeMetricsEntry>) {
  const name = MANAGED_EPHEMERAL_CONTAINERS;
  const help = MANAGED_EPHEMERAL_CONTAINERS_HELP;
  const get = (): MetricSnapshot => {
    const values = [...nodes()].map((node) => ({ value: node.podManager.managedEphemeralContainers, labels: { ...node.labels } }));
    return { name, help, type: 'gauge', values, aggregator: 'sum' };
  };
  return { name, help, type: 'gauge' as const, aggregator: 'sum' as const, get, reset: () => undefined };
}
