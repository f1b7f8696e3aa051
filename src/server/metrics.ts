import type { Registry } from 'prom-client';
import { send, type Route } from './server.js';

/** `/metrics` → the registry in the Prometheus text exposition format; a function is asked at each scrape. */
export function metricsRoute(options: { registry: Registry | (() => Registry) }): Route {
  return {
    path: '/metrics',
    handle: async (_req, res) => {
      const registry = typeof options.registry === 'function' ? options.registry() : options.registry;
      const body = await registry.metrics();
      send(res, 200, registry.contentType, body);
    },
  };
}
