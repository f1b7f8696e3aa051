// A process that holds only a fleet (and this thin IPC shim), so that its RSS, heap and CPU are
// the fleet's. Forked by fleet.bench.ts with { kubeconfig, manifestDir, nodes, prefix } as argv[2].
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { createFleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { serveChildOps, type ChildOps } from './child-ops.js';

const options = JSON.parse(process.argv[2] ?? '{}') as { kubeconfig: string; manifestDir: string; nodes: number; prefix: string };

// Every non-watch request the fleet sends (what kubeAPIQPS limits), counted.
let requests = 0;
const original = https.request.bind(https) as (...args: unknown[]) => ClientRequest;
(https as unknown as { request: unknown }).request = (...args: unknown[]) => {
  const first = args[0] as { path?: string } | string | URL;
  const path = typeof first === 'string' ? first : first instanceof URL ? first.search : (first.path ?? '');
  if (!/[?&]watch=(true|1)/.test(path)) requests++;
  return original(...args);
};

// New TLS connections (each costs a handshake): a keep-alive pool should make none at idle.
let connections = 0;
const createConnection = https.Agent.prototype.createConnection;
https.Agent.prototype.createConnection = function (this: https.Agent, ...args: Parameters<typeof createConnection>) {
  connections++;
  return createConnection.apply(this, args);
} as typeof createConnection;

const config = resolveFleetConfig(
  { kubeconfig: options.kubeconfig, readOnlyPort: 0, templates: [{ name: `${options.prefix}{i}`, count: options.nodes, staticPodPath: options.manifestDir }] },
  {},
);
const fleet = await createFleet({ config });
await fleet.start();

const ops: ChildOps = {
  started: () => true,
  memory: () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal };
  },
  cpu: () => process.cpuUsage(),
  requests: () => requests,
  connections: () => connections,
  stop: async () => {
    await fleet.stop();
    setImmediate(() => process.exit(0));
    return true;
  },
};

serveChildOps(ops);
