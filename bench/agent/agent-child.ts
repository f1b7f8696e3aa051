// A process that holds only the agent (and this thin IPC shim), so that its RSS, heap and CPU
// are the agent's. Forked by AgentChild (bench/agent/common.ts) with the options as argv[2].
import { createWriteStream } from 'node:fs';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { createAgent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { isHeartbeat } from '../../src/kube/api-clients.js';
import { applyRunGcSettings } from '../../src/cli/run-gc-settings.js';
import { createLogger, noopLogger, type Logger } from '../../src/logger.js';
import type { AgentChildOptions, RequestLogEntry } from './common.js';
import { serveChildOps, type ChildOps } from './child-ops.js';

// No top-level await: the side-by-side benchmark runs this file bundled into one CommonJS
// script (agent-child-bundle.ts), as the executable runs `kubelet-pods run`.
const options = JSON.parse(process.argv[2] ?? '{}') as AgentChildOptions;
/** When each stage of the start was reached (ms since the epoch), for the restart analysis (startup()). */
const now = (): number => performance.timeOrigin + performance.now();
const stamps: Record<string, number> = { modulesLoaded: now() };
// What `kubelet-pods run` does first (src/cli/run-command.ts); BENCH_AGENT_NODE_OPTIONS may override it.
applyRunGcSettings();

const requestTimes: number[] = [];
/** Event writes: they draw on a bucket of their own (eventRecordQPS), as the kubelet's event client does. */
const eventTimes: number[] = [];
const EVENTS_PATH = /^\/(api\/v1|apis\/events\.k8s\.io\/v1)\/namespaces\/[^/]+\/events(\/|\?|$)/;
/** Every request sent (watches included), by method and response status, as client-go's rest_client_requests_total. */
const requestCounts: Record<string, Record<string, number>> = {};
const countRequest = (method: string, code: string): void => {
  const byCode = (requestCounts[method] ??= {});
  byCode[code] = (byCode[code] ?? 0) + 1;
};
/** With recordRequestLog: every request with its start and end (ms since the time origin), for analysis. */
const requestLog: RequestLogEntry[] = [];
if (options.recordRequests) {
  // The agent's client (src/kube/api-transport.ts, watch-stream.ts) calls https.request through
  // the module object for every request, so this wrapper sees them all; watches
  // (the API source) are long-lived and not what kubeAPIQPS limits, so they are left out of
  // the request times (the counts keep them, as the kubelet's client metrics do), and so are
  // the heartbeats, which skip the bucket as the kubelet's do.
  const original = https.request.bind(https) as (...args: unknown[]) => ClientRequest;
  (https as unknown as { request: unknown }).request = (...args: unknown[]) => {
    const first = args[0] as { path?: string; method?: string } | string | URL;
    const path = typeof first === 'string' ? first : first instanceof URL ? first.pathname + first.search : (first.path ?? '');
    const method = typeof first === 'object' && !(first instanceof URL) ? (first.method ?? 'GET') : 'GET';
    if (!/[?&]watch=(true|1)/.test(path) && !isHeartbeat(method, path.split('?')[0]!)) (EVENTS_PATH.test(path) ? eventTimes : requestTimes).push(performance.timeOrigin + performance.now());
    const req = original(...args);
    const start = performance.timeOrigin + performance.now();
    let counted = false;
    req.once('response', (res) => {
      counted = true;
      countRequest(req.method, String(res.statusCode));
      if (options.recordRequestLog) {
        requestLog.push({ start, end: performance.timeOrigin + performance.now(), method: req.method, path: req.path, code: res.statusCode ?? 0 });
      }
    });
    req.once('error', () => {
      if (!counted) countRequest(req.method, '<error>');
      counted = true;
    });
    return req;
  };
}

const argv = ['--kubeconfig', options.kubeconfig, '--hostname-override', options.node];
if (options.manifestDir) argv.push('--pod-manifest-path', options.manifestDir);
if (options.manifestURL) argv.push('--manifest-url', options.manifestURL);
for (const h of options.manifestURLHeader ?? []) argv.push('--manifest-url-header', h);
if (options.configFile) argv.push('--config', options.configFile);
argv.push('--healthz-port', '0', '--read-only-port', String(options.readOnlyPort ?? 0), '--port', '0');
if (options.simulatedLifecycle) argv.push('--simulated-lifecycle', options.simulatedLifecycle);
async function startAgent() {
  const { config } = await resolveRunConfig(argv);
  stamps['configResolved'] = now();
  const logger: Logger = options.logFile
    ? createLogger({ destination: createWriteStream(options.logFile, { flags: 'a' }), level: options.logLevel ?? 'info', pretty: false })
    : noopLogger;
  // As `kubelet-pods run` makes its agent (src/cli/run-command.ts).
  const created = createAgent({ config, logger, nodeStatusFirst: true, ...(options.housekeepingIntervalMs ? { housekeepingIntervalMs: options.housekeepingIntervalMs } : {}) });
  stamps['agentCreated'] = now();
  await created.start();
  stamps['started'] = now();
  return created;
}

startAgent().then(
  (agent) => serveChildOps(childOps(agent)),
  (err: unknown) => {
    process.stderr.write(`agent child: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);

const childOps = (agent: Awaited<ReturnType<typeof startAgent>>): ChildOps => ({
  started: () => true,
  memory: () => {
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers };
  },
  cpu: () => process.cpuUsage(),
  requests: () => requestTimes.splice(0, requestTimes.length),
  eventRequests: () => eventTimes.splice(0, eventTimes.length),
  requestCounts: () => requestCounts,
  requestLog: () => requestLog.splice(0, requestLog.length),
  startup: () => ({ timeOrigin: performance.timeOrigin, nodeTiming: performance.nodeTiming.toJSON(), stamps }),
  idle: () => agent.mirrorsIdle(),
  stop: async () => {
    await agent.stop();
    setImmediate(() => process.exit(0));
    return true;
  },
});
