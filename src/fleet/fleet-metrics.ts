import { AggregatorRegistry, Counter, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { RateLimiter } from '../kube/rate-limiter.js';
import type { Route } from '../server/server.js';
import { send } from '../server/server.js';

/**
 * One `/metrics` for the fleet: each node registers its series (the agent's and the pod
 * manager's, the very ones `kubelet-pods run` has) in a registry of its own whose default
 * label is `node="<name>"`, and the scrape merges them with prom-client's aggregator, so
 * every per-node series carries its node and no series is written twice.
 */
export interface FleetMetrics {
  /** A new registry for `nodeName`, its series labelled with it. */
  registryFor(nodeName: string): Registry;
  /** Forgets a node's registry (its agent stopped for good here). */
  drop(registry: Registry): void;
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
  const registries: Registry[] = [];
  const fleet = new Registry();
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
    registryFor(nodeName) {
      const registry = new Registry();
      registry.setDefaultLabels({ node: nodeName });
      registries.push(registry);
      return registry;
    },
    drop(registry) {
      const i = registries.indexOf(registry);
      if (i >= 0) registries.splice(i, 1);
    },
    route: () => ({
      path: '/metrics',
      handle: async (_req, res) => {
        const all = await Promise.all([fleet, ...registries].map((r) => r.getMetricsAsJSON()));
        const merged = AggregatorRegistry.aggregate(all as unknown as MetricObjectWithValues<MetricValue<string>>[][]);
        send(res, 200, merged.contentType, await merged.metrics());
      },
    }),
  };
}
