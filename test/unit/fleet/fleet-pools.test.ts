// The fleet's pools: the API pool's one bound throughout; the Lease pool's start bound until
// every node has registered and no Lease write waits for a connection (or a while at most),
// then its running one, for agents made before and after.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createFleetPools,
  FLEET_LEASE_SOCKETS,
  FLEET_LEASE_SOCKETS_AT_START,
  FLEET_MAX_SOCKETS,
  LEASE_BOUND_WAIT_MS,
  LEASE_QUEUE_CHECK_MS,
} from '../../../src/fleet/fleet-pools.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { makeCA } from '../../helpers/certificates.js';
import { httpsGet } from '../../helpers/https-get.js';

describe('createFleetPools', () => {
  const ca = makeCA('fleet-pools-test-ca');
  let server: Server;
  let port = 0;
  before(async () => {
    const serving = ca.sign('localhost', [], 'server');
    // Each answer comes after the number of ms its path names.
    server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => void setTimeout(() => res.end('ok'), Number((req.url ?? '/0').slice(1))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const until = async (check: () => boolean, what: string): Promise<void> => {
    for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(check(), what);
  };

  it('keeps the API calls to one bound throughout, and the Lease renewals to fewer connections while nodes register', () => {
    assert.ok(FLEET_LEASE_SOCKETS_AT_START < FLEET_LEASE_SOCKETS);
    const pools = createFleetPools(new FakeClock());
    const api = pools.api.agentFor({ ca: ca.cert });
    const leases = pools.leases.agentFor({ ca: ca.cert });
    assert.notEqual(api, leases, 'two pools, two agents for one identity');
    assert.equal(api.maxSockets, FLEET_MAX_SOCKETS);
    assert.equal(leases.maxSockets, FLEET_LEASE_SOCKETS_AT_START);
    pools.registered();
    assert.equal(api.maxSockets, FLEET_MAX_SOCKETS, 'a wave of pods opens no more API connections than the start');
    assert.equal(leases.maxSockets, FLEET_LEASE_SOCKETS, 'nothing waits: the running bound at once');
    // An identity first seen afterwards (a node's own kubeconfig) starts at the running bound.
    const other = makeCA('fleet-pools-other-ca').cert;
    assert.equal(pools.api.agentFor({ ca: other }).maxSockets, FLEET_MAX_SOCKETS);
    assert.equal(pools.leases.agentFor({ ca: other }).maxSockets, FLEET_LEASE_SOCKETS);
  });

  it('raises the Lease bound only once the Lease writes that wait for a connection have gone through', async () => {
    const clock = new FakeClock();
    const pools = createFleetPools(clock);
    const agent = pools.leases.agentFor({ ca: ca.cert });
    // The start's Lease creates: more than the start bound, so some wait.
    const creates = Array.from({ length: FLEET_LEASE_SOCKETS_AT_START + 4 }, () => httpsGet(`https://localhost:${port}/300`, { agent }));
    await until(() => pools.leases.queued() === 4, 'four writes wait for a connection');
    pools.registered();
    await clock.advance(LEASE_QUEUE_CHECK_MS);
    assert.equal(agent.maxSockets, FLEET_LEASE_SOCKETS_AT_START, 'not raised while writes wait');
    assert.equal(Object.values(agent.sockets).flat().length, FLEET_LEASE_SOCKETS_AT_START, 'no connection opened beside the busy ones');
    await Promise.all(creates);
    assert.equal(pools.leases.queued(), 0);
    await clock.advance(LEASE_QUEUE_CHECK_MS);
    assert.equal(agent.maxSockets, FLEET_LEASE_SOCKETS, 'raised once none waits');
    agent.destroy();
  });

  it('raises the Lease bound after a while even if writes still wait', async () => {
    const clock = new FakeClock();
    const pools = createFleetPools(clock);
    const agent = pools.leases.agentFor({ ca: ca.cert });
    const slow = Array.from({ length: FLEET_LEASE_SOCKETS_AT_START + 1 }, () => httpsGet(`https://localhost:${port}/1500`, { agent }).catch(() => 'gone'));
    await until(() => pools.leases.queued() === 1, 'one write waits');
    pools.registered();
    await clock.advance(LEASE_BOUND_WAIT_MS - LEASE_QUEUE_CHECK_MS);
    assert.equal(agent.maxSockets, FLEET_LEASE_SOCKETS_AT_START, 'still waiting within the limit');
    await clock.advance(LEASE_QUEUE_CHECK_MS);
    assert.equal(agent.maxSockets, FLEET_LEASE_SOCKETS, 'raised at the limit');
    agent.destroy();
    await Promise.all(slow);
  });
});
