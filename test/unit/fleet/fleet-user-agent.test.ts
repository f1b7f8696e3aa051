// The fleet's User-Agent: the kubelet's field manager, then the fleet and the replica, so that
// the API server's audit log tells which replica wrote what (docs/fleet.md, "Several replicas").
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { KUBELET_VERSION } from '../../../src/constants.js';
import { fleetUserAgent } from '../../../src/fleet/fleet.js';
import { goArch, goOS } from '../../../src/values/go-platform.js';

const KUBELET = `kubelet/${KUBELET_VERSION} (${goOS(process.platform)}/${goArch(process.arch)})`;

it('is the kubelet\'s (its field manager), names the fleet, and the replica under --shard-by-lease with only visible ASCII and no parentheses of its own', () => {
  assert.equal(fleetUserAgent(undefined), `${KUBELET} kubelet-pods/fleet`);
  assert.equal(fleetUserAgent('kubelet-pods-fleet-7d9c5-x2x'), `${KUBELET} kubelet-pods/fleet (replica kubelet-pods-fleet-7d9c5-x2x)`);
  assert.equal(fleetUserAgent('a b(c)\né'), `${KUBELET} kubelet-pods/fleet (replica a_b_c___)`);
  // The API server names the field manager after the User-Agent up to its first '/'.
  assert.equal(fleetUserAgent('r').split('/')[0], 'kubelet');
});
