// The fencing of a node run under --shard-by-lease (src/fleet/lease-fence.ts), on the fake
// clock: writes stop before another replica may take the Lease, reads never do, a renewal
// opens the fence again, a Lease held by another replica closes it for good.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiClients } from '../../../src/kube/api-clients.js';
import { hasErrorCode } from '../../../src/errors.js';
import { createLeaseFence } from '../../../src/fleet/lease-fence.js';
import { createNodeLease, leaseExpired } from '../../../src/node/node-lease.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { FakeLeaseApi } from '../../helpers/fake-lease-api.js';

/** A stand-in for CoreV1Api that records the calls that reach it. */
class FakeCore {
  readonly calls: string[] = [];
  async createNamespacedPod(): Promise<string> {
    this.calls.push('createNamespacedPod');
    return 'created';
  }
  async patchNamespacedPodStatus(): Promise<string> {
    this.calls.push('patchNamespacedPodStatus');
    return 'patched';
  }
  async readNamespacedPod(): Promise<string> {
    this.calls.push('readNamespacedPod');
    return 'read';
  }
}

const clients = (core: FakeCore, events: FakeCore = core): ApiClients => ({ core, events, coordination: 'coordination' }) as unknown as ApiClients;
const fenced = (err: unknown): boolean => hasErrorCode(err, 'KP_ERR_FLEET_FENCED');

describe('createLeaseFence', () => {
  it('sends writes only while the last renewal is younger than the duration less the margin; reads always', async () => {
    const clock = new FakeClock();
    const fence = createLeaseFence({ nodeName: 'n-1', clock });
    const core = new FakeCore();
    const api = fence.guard(clients(core)).core as unknown as FakeCore;
    await assert.rejects(api.createNamespacedPod(), fenced, 'nothing is written before the Lease is');
    fence.renewed(clock.now());
    assert.equal(await api.createNamespacedPod(), 'created');
    await clock.advance(29_999);
    assert.equal(await api.patchNamespacedPodStatus(), 'patched');
    await clock.advance(1); // 40 s duration − 10 s margin
    assert.equal(fence.isOpen(), false);
    await assert.rejects(api.patchNamespacedPodStatus(), (err: unknown) => fenced(err) && /n-1.*patchNamespacedPodStatus.*30 s ago/.test((err as Error).message));
    assert.equal(await api.readNamespacedPod(), 'read', 'reads are not fenced');
    assert.deepEqual(core.calls, ['createNamespacedPod', 'patchNamespacedPodStatus', 'readNamespacedPod']);
    fence.renewed(clock.now());
    assert.equal(await api.createNamespacedPod(), 'created', 'a renewal opens the fence again');
  });

  it('closes for good once another replica holds the Lease', async () => {
    const clock = new FakeClock();
    const fence = createLeaseFence({ nodeName: 'n-1', clock });
    const core = new FakeCore();
    const api = fence.guard(clients(core)).core as unknown as FakeCore;
    fence.renewed(clock.now());
    fence.revoke();
    fence.renewed(clock.now());
    await assert.rejects(api.createNamespacedPod(), (err: unknown) => fenced(err) && /another replica holds/.test((err as Error).message));
    assert.deepEqual(core.calls, []);
  });

  it('guards the event client too and leaves the others alone', async () => {
    const clock = new FakeClock();
    const fence = createLeaseFence({ nodeName: 'n-1', clock, leaseDurationSeconds: 20, marginMs: 1_000 });
    const core = new FakeCore();
    const events = new FakeCore();
    const guarded = fence.guard(clients(core, events));
    assert.equal((guarded as unknown as { coordination: string }).coordination, 'coordination');
    fence.renewed(clock.now());
    await clock.advance(19_000);
    await assert.rejects((guarded.events as unknown as FakeCore).createNamespacedPod(), fenced);
    assert.deepEqual(events.calls, []);
  });

  it('with a node Lease that cannot be renewed, closes before the Lease may be taken, and stays closed once it is', async () => {
    const leaseApi = new FakeLeaseApi();
    const clock = new FakeClock();
    const fence = createLeaseFence({ nodeName: 'n-1', clock });
    const lost: string[] = [];
    const lease = createNodeLease({
      nodeName: 'n-1',
      api: leaseApi,
      clock,
      holderIdentity: 'r1',
      onRenewed: (t) => fence.renewed(t),
      onLost: (holder) => {
        lost.push(holder);
        fence.revoke();
      },
    });
    lease.start();
    await clock.advance(0);
    assert.equal(fence.isOpen(), true);
    // The API server becomes unreachable for this replica: every renewal fails.
    leaseApi.failures = Array.from({ length: 1000 }, () => new Error('connect ECONNREFUSED'));
    while (fence.isOpen()) await clock.advance(100);
    const closedAt = clock.now();
    const held = leaseApi.lease!;
    assert.equal(leaseExpired(held, closedAt), false, 'no other replica may take the Lease yet');
    const expiresAt = new Date(held.spec!.renewTime!).getTime() + 40_000;
    assert.ok(expiresAt - closedAt.getTime() >= 10_000, `closed ${expiresAt - closedAt.getTime()} ms before the Lease expires`);
    // Once the Lease has expired, another replica takes it; then this one's API server is back.
    await clock.advance(expiresAt - closedAt.getTime() + 1);
    leaseApi.overwrite({ holderIdentity: 'r2', renewTime: clock.now() as never });
    leaseApi.failures = [];
    await clock.advance(25_000);
    assert.deepEqual(lost, ['r2']);
    assert.equal(fence.isOpen(), false);
    assert.equal(leaseApi.lease?.spec?.holderIdentity, 'r2', 'the new holder keeps the Lease');
    await lease.stop();
  });
});
