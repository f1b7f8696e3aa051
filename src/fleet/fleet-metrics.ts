import { AggregatorRegistry, Counter, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { RateLimiter } from '../kube/rate-limiter.js';
import { showNodeMetrics, type NodeMetricsEntry } from '../server/node-metrics-view.js';
import type { Route } from '../server/server.js';
import { send } from '../server/server.js';

/**
 * One `/metrics` for the fleet: each node keeps its metric values as plain numbers (the agent's
 * and the pod manager's, the very ones `kubelet-pods run` shows), and one set of series for the
 * whole fleet reads them at each scrape, every series labelled `node="<name>"`. A node costs
 * its numbers, not a registry and a prom-client metric per metric (docs/performance.md).
 */
export interface FleetMetrics {
  /** Shows this node's metrics, labelled with its name (replacing a node of that name shown before). */
  addNode(nodeName: string, node: Omit<NodeMetricsEntry, 'labels'>): void;
  /** Stops showing a node (its agent stopped for good here); only `node` itself, not a newer one of that name. */
  drop(nodeName: string, node: Omit<NodeMetricsEntry, 'labels'>): void;
  /** A new registry for one node's own /metrics (its kubelet port), its series labelled with its name. */
  registryFor(nodeName: string): Registry;
  /** Series of the fleet itself (no node label). */
  readonly fleet: Registry;
  /**
   * `limiter`, counting each request it lets through: every API request of the fleet but its
   * watches (`kubelet_pods_fleet_api_requests_total`, and apiRequests()).
   */
  countRequests(limiter: RateLimiter): RateLimiter;
  /** API requests sent so far (for the demo's request rate). */
  apiRequests(): number;
  route(): Route;
}

export function createFleetMetrics(): FleetMetrics {
  const nodes = new Map<string, NodeMetricsEntry>();
  const fleet = new Registry();
  // Every node's series, after the fleet's own: one set of views over the nodes' values.
  const nodeSeries = showNodeMetrics(new Registry(), () => nodes.values());
  let requests = 0;
  const requestCounter = new Counter({
    name: 'kubelet_pods_fleet_api_requests_total',
    help: 'API requests the fleet sent, watches not included (each one took a token of kubeAPIQPS or eventRecordQPS).',
    registers: [fleet],
  });
  return {
    fleet,
    countRequests: (limiter) => ({
      acquire: async (priority) => {
        await limiter.acquire(priority);
        requests++;
        requestCounter.inc();
      },
    }),
    apiRequests: () => requests,
    addNode(nodeName, node) {
      nodes.set(nodeName, { labels: { node: nodeName }, metrics: node.metrics, podManager: node.podManager });
    },
    drop(nodeName, node) {
      if (nodes.get(nodeName)?.metrics === node.metrics) nodes.delete(nodeName);
    },
    registryFor(nodeName) {
      const registry = new Registry();
      registry.setDefaultLabels({ node: nodeName });
      return registry;
    },
    route: () => ({
      path: '/metrics',
      handle: async (_req, res) => {
        const all = await Promise.all([fleet, nodeSeries].map((r) => r.getMetricsAsJSON()));
        const merged = AggregatorRegistry.aggregate(all as unknown as MetricObjectWithValues<MetricValue<string>>[][]);
        send(res, 200, merged.contentType, await merged.metrics());
      },
    }),
  };
}
