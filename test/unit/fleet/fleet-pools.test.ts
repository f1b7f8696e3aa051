// The fleet's pools: the API pool's one bound throughout; the Lease pool's start bound until
// every node has registered, then its running one, for agents made before and after.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  createFleetPools,
  FLEET_LEASE_SOCKETS,
  FLEET_LEASE_SOCKETS_AT_START,
  FLEET_MAX_SOCKETS,
} from '../../../src/fleet/fleet-pools.js';
import { makeCA } from '../../helpers/certificates.js';

describe('createFleetPools', () => {
  const ca = makeCA('fleet-pools-test-ca').cert;

  it('keeps the API calls to one bound throughout, and the Lease renewals to fewer connections while nodes register', () => {
    assert.ok(FLEET_LEASE_SOCKETS_AT_START < FLEET_LEASE_SOCKETS);
    const pools = createFleetPools();
    const api = pools.api.agentFor({ ca });
    const leases = pools.leases.agentFor({ ca });
    assert.notEqual(api, leases, 'two pools, two agents for one identity');
    assert.equal(api.maxSockets, FLEET_MAX_SOCKETS);
    assert.equal(leases.maxSockets, FLEET_LEASE_SOCKETS_AT_START);
    pools.registered();
    assert.equal(api.maxSockets, FLEET_MAX_SOCKETS, 'a wave of pods opens no more API connections than the start');
    assert.equal(leases.maxSockets, FLEET_LEASE_SOCKETS);
    // An identity first seen afterwards (a node's own kubeconfig) starts at the running bound.
    const other = makeCA('fleet-pools-other-ca').cert;
    assert.equal(pools.api.agentFor({ ca: other }).maxSockets, FLEET_MAX_SOCKETS);
    assert.equal(pools.leases.agentFor({ ca: other }).maxSockets, FLEET_LEASE_SOCKETS);
  });
});
