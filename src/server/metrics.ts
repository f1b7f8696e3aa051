import type { Registry } from 'prom-client';
import { send, type Route } from './server.js';

/** `/metrics` → the registry in the Prometheus text exposition format. */
export function metricsRoute(options: { registry: Registry }): Route {
  return {
    path: '/metrics',
    handle: async (_req, res) => {
      const body = await options.registry.metrics();
      send(res, 200, options.registry.contentType, body);
    },
  };
}
