// The fleet's User-Agent names the replica, so that the API server's audit log tells which
// replica wrote what (docs/fleet.md, "Several replicas").
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fleetUserAgent } from '../../../src/fleet/fleet.js';

it('names the replica under --shard-by-lease, with only visible ASCII and no parentheses of its own', () => {
  assert.equal(fleetUserAgent(undefined), 'kubelet-pods/fleet');
  assert.equal(fleetUserAgent('kubelet-pods-fleet-7d9c5-x2x'), 'kubelet-pods/fleet (replica kubelet-pods-fleet-7d9c5-x2x)');
  assert.equal(fleetUserAgent('a b(c)\né'), 'kubelet-pods/fleet (replica a_b_c___)');
});
