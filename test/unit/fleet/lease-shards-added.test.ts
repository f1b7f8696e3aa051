// The Lease shards take nodes added after the start (an adopted Node, src/fleet/node-adoption.ts):
// they try its Lease from then on and forget it when it is released (src/fleet/lease-shards.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLeaseShards } from '../../../src/fleet/lease-shards.js';
import { FakeClock, settle } from '../../../src/time/fake-clock.js';
import { FakeLeaseApi } from '../../helpers/fake-lease-api.js';

/** Lease shards of replica `replica-a` over no node at first, started. */
function started(api = new FakeLeaseApi()) {
  const clock = new FakeClock();
  const acquired: string[] = [];
  const shards = createLeaseShards({ identity: 'replica-a', nodes: [], api, clock, onAcquired: (name) => acquired.push(name) });
  shards.start();
  return { clock, api, acquired, shards };
}

describe('Lease shards: nodes added after the start', () => {
  it('takes the Lease of a node added later within a second, and not once it is removed', async () => {
    const { clock, api, acquired, shards } = started();
    shards.addNode('karp-a');
    await clock.advance(1000);
    await settle();
    assert.deepEqual(acquired, ['karp-a']);
    assert.equal(api.lease?.spec?.holderIdentity, 'replica-a');
    assert.deepEqual(shards.held(), ['karp-a']);
    await shards.removeNode('karp-a');
    assert.deepEqual(shards.held(), []);
    await shards.stop();
  });

  it('a node removed before its first try is never claimed', async () => {
    const { clock, api, acquired, shards } = started();
    shards.addNode('karp-b');
    await shards.removeNode('karp-b');
    await clock.advance(30_000);
    await settle();
    assert.deepEqual(acquired, []);
    assert.deepEqual(api.calls, []);
    await shards.stop();
  });

  it('a node removed while its claim is in flight is not started', async () => {
    const api = new FakeLeaseApi();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const create = api.createNamespacedLease.bind(api);
    api.createNamespacedLease = async (p) => {
      await held;
      return create(p);
    };
    const { clock, acquired, shards } = started(api);
    shards.addNode('karp-c');
    await clock.advance(1000);
    await settle();
    assert.deepEqual(api.calls, ['read'], 'the claim is in flight');
    const removed = shards.removeNode('karp-c');
    release();
    await removed;
    await settle();
    assert.deepEqual(acquired, []);
    assert.deepEqual(shards.held(), []);
    await shards.stop();
  });
});
