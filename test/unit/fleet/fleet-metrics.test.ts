// The fleet's request counter: every request a limiter lets through is counted once, after
// its token, and shown on the fleet's /metrics.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.js';
import type { RateLimiter } from '../../../src/kube/rate-limiter.js';
import { createAgentMetrics } from '../../../src/server/agent-metrics.js';

it('countRequests counts each request once its token is granted, across limiters', async () => {
  const metrics = createFleetMetrics();
  const grants: Array<() => void> = [];
  const gated: RateLimiter = { acquire: () => new Promise((resolve) => grants.push(resolve)) };
  const open: RateLimiter = { acquire: () => Promise.resolve() };
  const main = metrics.countRequests(gated);
  const events = metrics.countRequests(open);
  const waiting = main.acquire('low');
  await events.acquire();
  assert.equal(metrics.apiRequests(), 1, 'the waiting request is not counted yet');
  grants[0]!();
  await waiting;
  assert.equal(metrics.apiRequests(), 2);
  const text = await metrics.fleet.metrics();
  assert.match(text, /^kubelet_pods_fleet_api_requests_total 2$/m);
});

/** What the fleet's /metrics route answers. */
async function scrape(metrics: ReturnType<typeof createFleetMetrics>): Promise<string> {
  let body = '';
  const res = { setHeader: () => undefined, end: (b: string) => void (body = b), req: { method: 'GET' } };
  await metrics.route().handle({ url: '/metrics' } as never, res as never, '/metrics');
  return body;
}

it("shows every node's series labelled by node, and drop forgets only the node it was given", async () => {
  const metrics = createFleetMetrics();
  const a = { metrics: createAgentMetrics(), podManager: { managedEphemeralContainers: 2 } };
  const b = { metrics: createAgentMetrics(), podManager: { managedEphemeralContainers: 0 } };
  metrics.addNode('a', a);
  metrics.addNode('b', b);
  a.metrics.recordSourceError('http');
  let text = await scrape(metrics);
  assert.match(text, /^kubelet_pods_source_errors_total\{source="http",node="a"\} 1$/m);
  assert.match(text, /^kubelet_managed_ephemeral_containers\{node="a"\} 2$/m);
  assert.match(text, /^kubelet_mirror_pods\{node="b"\} 0$/m);
  assert.match(text, /^kubelet_pods_fleet_api_requests_total 0$/m);
  // A newer agent of the same name replaced `b`: dropping the old one leaves the new one.
  const b2 = { metrics: createAgentMetrics(), podManager: { managedEphemeralContainers: 0 } };
  metrics.addNode('b', b2);
  metrics.drop('b', b);
  assert.match(await scrape(metrics), /node="b"/);
  metrics.drop('b', b2);
  text = await scrape(metrics);
  assert.doesNotMatch(text, /node="b"/);
  assert.match(text, /node="a"/);
  const own = metrics.registryFor('a');
  assert.equal((await own.getMetricsAsJSON()).length, 0, "a node's own registry starts empty (the agent shows its values there)");
});
