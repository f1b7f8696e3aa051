import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import { send, type Route } from './server.js';

type PromClient = typeof import('prom-client');
let promClient: PromClient | undefined;

/**
 * Loads prom-client, which only a scrape needs: with its dependencies and the built-in modules
 * it loads (perf_hooks, zlib) it was the largest part of the agent's start-up after the Pod
 * schema validator (docs/performance.md, "Restart → Node Ready, 2026-11-27"). Bundled, it is a
 * chunk of its own. `/metrics` awaits it before it asks for its registry.
 */
export async function loadPromClient(): Promise<void> {
  if (promClient === undefined) {
    const loaded = await import('prom-client');
    promClient ??= loaded;
  }
}

/**
 * A new prom-client registry: the default of the agent's `parts.registry`. When nobody loaded
 * prom-client first (`Agent.registry` read before any scrape), it is required from the
 * package's dependencies here.
 */
export function newRegistry(): Registry {
  promClient ??= createRequire(import.meta.url)('prom-client') as PromClient;
  return new promClient.Registry();
}

/** `/metrics` → the registry in the Prometheus text exposition format; a function is asked at each scrape. */
export function metricsRoute(options: { registry: Registry | (() => Registry) }): Route {
  return {
    path: '/metrics',
    handle: async (_req, res) => {
      if (typeof options.registry === 'function') await loadPromClient();
      const registry = typeof options.registry === 'function' ? options.registry() : options.registry;
      const body = await registry.metrics();
      send(res, 200, registry.contentType, body);
    },
  };
}
