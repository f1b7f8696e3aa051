// One simulated runtime shared by a fleet's nodes: each node hears only about its own pods,
// and a node's pods stop with their grace period, as on a single node (the shared view used to
// drop `terminate`, so a fleet's pods stopped at once).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { SIMULATION_ANNOTATIONS } from '../../../src/runtime/simulation-annotations.js';
import { shareStatusProvider } from '../../../src/fleet/shared-status.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

const pod = (uid: string, node: string): Pod => ({
  metadata: { name: `web-${node}`, namespace: 'default', uid, annotations: { 'kubernetes.io/config.source': 'file', [SIMULATION_ANNOTATIONS.stopSeconds]: '3' } },
  spec: { nodeName: node, terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
});

/** Nodes a and b over one shared provider, each with a pod Running, and what each one heard. */
async function twoNodesRunning() {
  const clock = new FakeClock();
  const shared = shareStatusProvider(createSimulatedStatusProvider({ clock, startDelayMs: 1000 }));
  const a = shared.forNode('a');
  const b = shared.forNode('b');
  const heard: Record<string, string[]> = { a: [], b: [] };
  a.onChange!((uid) => heard['a']!.push(uid));
  b.onChange!((uid) => heard['b']!.push(uid));
  const pa = pod('ua', 'a');
  const pb = pod('ub', 'b');
  a.statusFor(pa, clock.now());
  b.statusFor(pb, clock.now());
  await clock.advance(1000);
  assert.equal(a.statusFor(pa, clock.now()).phase, 'Running');
  return { clock, shared, a, b, pa, pb, heard };
}

it('changes reach only the node of the pod; a termination takes the pod its stop time, within its grace period', async () => {
  const { clock, a, b, pa, pb, heard } = await twoNodesRunning();
  assert.ok(heard['a']!.includes('ua') && !heard['a']!.includes('ub'));
  assert.ok(heard['b']!.includes('ub') && !heard['b']!.includes('ua'));

  assert.ok(a.terminate, 'the shared view passes terminations on');
  let stopped = false;
  const stopping = a.terminate!(pa, 5).then(() => (stopped = true));
  await clock.advance(2_000);
  assert.equal(stopped, false, 'still stopping 2 s into a 3 s stop');
  assert.ok(a.statusFor(pa, clock.now()).containerStatuses?.[0]?.state?.running, 'the container runs until it exits');
  await clock.advance(1_500);
  await stopping;
  assert.ok(stopped);
  assert.ok(a.statusFor(pa, clock.now()).containerStatuses?.[0]?.state?.terminated, 'then shows terminated');
  assert.equal(b.statusFor(pb, clock.now()).phase, 'Running', 'the other node is untouched');
});

it('a node dropped for good (an adopted node released): its pods are forgotten, the other nodes\' kept', async () => {
  const { clock, shared, b, pa, pb, heard } = await twoNodesRunning();
  shared.dropNode('a');
  heard['a']!.length = 0;
  // Forgotten: asked again, the pod starts afresh, and node a's listener is gone.
  assert.equal(shared.provider.statusFor(pa, clock.now()).phase, 'Pending');
  await clock.advance(1000);
  assert.deepEqual(heard['a'], []);
  assert.equal(b.statusFor(pb, clock.now()).phase, 'Running', 'the other node is untouched');
});

it("a node's view is one small object: the methods are every node's", async () => {
  const clock = new FakeClock();
  const shared = shareStatusProvider(createSimulatedStatusProvider({ clock }));
  // About 80 bytes with its node's name; with a closure per method and two bound methods, about 940.
  const bytes = await retainedBytesPer(20_000, (i) => shared.forNode(`node-${i}`));
  assert.ok(bytes < 250, `${bytes.toFixed(1)} bytes per view`);
  const view = shared.forNode('n');
  for (const name of ['statusFor', 'forget', 'adopt', 'onChange', 'terminate', 'containerLogs'] as const) assert.equal(typeof view[name], 'function', name);
  for (const name of ['stop', 'onContainerEvent'] as const) assert.equal(view[name], undefined, `${name} is the fleet's, not a node's`);
});
