// The fleet's request counter: every request a limiter lets through is counted once, after
// its token, and shown on the fleet's /metrics.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.js';
import type { RateLimiter } from '../../../src/kube/rate-limiter.js';

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
