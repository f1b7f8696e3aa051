// lazyEventRecorder: the recorder (its queue, correlator and caches) exists only once a node
// records its first event; before that, idle and stop answer for it, and after stop nothing is made.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { lazyEventRecorder, type EventRecorder } from '../../../src/events/event-recorder.js';
import { nodeEventRef } from '../../../src/events/static-pod-events.js';

function counting(): { make: () => EventRecorder; made: () => number; events: string[]; stops: () => number } {
  let made = 0;
  let stops = 0;
  const events: string[] = [];
  return {
    make: () => {
      made++;
      return {
        event: (_o, _t, reason) => void events.push(reason),
        idle: () => Promise.resolve(),
        stop: () => {
          stops++;
          return Promise.resolve();
        },
      };
    },
    made: () => made,
    events,
    stops: () => stops,
  };
}

it('makes the recorder at the first event, once, and hands it every event', async () => {
  const c = counting();
  const recorder = lazyEventRecorder(c.make);
  await recorder.idle();
  assert.equal(c.made(), 0, 'idle does not make it');
  recorder.event(nodeEventRef('n1'), 'Warning', 'First', 'm');
  recorder.event(nodeEventRef('n1'), 'Normal', 'Second', 'm');
  assert.equal(c.made(), 1);
  assert.deepEqual(c.events, ['First', 'Second']);
  await recorder.stop();
  assert.equal(c.stops(), 1, 'stop reaches the recorder made');
  recorder.event(nodeEventRef('n1'), 'Normal', 'Late', 'm');
  assert.deepEqual(c.events, ['First', 'Second'], 'nothing after stop');
});

it('stopped before any event: nothing is ever made', async () => {
  const c = counting();
  const recorder = lazyEventRecorder(c.make);
  await recorder.stop();
  recorder.event(nodeEventRef('n1'), 'Warning', 'Late', 'm');
  assert.equal(c.made(), 0);
});
