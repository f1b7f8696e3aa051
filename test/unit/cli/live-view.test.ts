// The single-node demo's view: the scheduler's section sits between the header and the table of
// static pods, which stays the last paragraph of each frame (scripts read it there).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startLiveView } from '../../../src/cli/live-view.js';
import { FakeMirrorClient } from '../../../src/mirror/fake-mirror-client.js';
import { PodManager } from '../../../src/pod/manager.js';

function capture(): { isTTY: false; text: string; write(s: string): boolean } {
  const out = { isTTY: false as const, text: '', write: (s: string) => ((out.text += s), true) };
  return out;
}

it('the section between the header and the table; without one, the header and the table', () => {
  const podManager = new PodManager({ mirrorClient: new FakeMirrorClient() });
  const out = capture();
  const view = startLiveView({ podManager, header: ['HEADER'], section: () => ['DEPLOYMENT x', 'scheduler sees: y'], out: out as unknown as NodeJS.WriteStream, refreshMs: 60_000 });
  view.stop();
  const frame = out.text.trim().split('\n\n');
  assert.deepEqual(frame.slice(0, 2), ['HEADER', 'DEPLOYMENT x\nscheduler sees: y']);
  assert.match(frame.at(-1)!, /^STATIC POD\s+NAMESPACE/, 'the table is the last paragraph');

  const plain = capture();
  startLiveView({ podManager, header: ['HEADER'], out: plain as unknown as NodeJS.WriteStream, refreshMs: 60_000 }).stop();
  assert.deepEqual(plain.text.trim().split('\n\n').slice(0, 2).map((p) => p.split('\n')[0]), ['HEADER', 'STATIC POD  NAMESPACE  UID/HASH  MIRROR UID  MIRROR HASH  IN SYNC  STATUS']);
});
