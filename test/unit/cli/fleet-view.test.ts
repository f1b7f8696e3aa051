// The fleet demo's view: progress lines for logs, the terminal view, the request rate meter and
// when the view calls the fleet converged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateMeter, isConverged, progressLine, renderFleetView, startFleetLiveView, PROGRESS_LINE_EVERY_MS, type FleetProgress } from '../../../src/cli/fleet-view.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

const progress = (p: Partial<FleetProgress> = {}): FleetProgress => ({ nodes: 3, nodesReady: 0, expected: 9, mirrors: 0, running: 0, requestsPerSecond: 0, elapsedMs: 0, ...p });
const done = progress({ nodesReady: 3, mirrors: 9, running: 9, requestsPerSecond: 12.345, elapsedMs: 4200 });

/** A stream that is not a terminal, keeping what was written, line by line. */
function logStream(): { isTTY: false; lines: string[]; write(s: string): boolean } {
  const lines: string[] = [];
  return { isTTY: false, lines, write: (s: string) => (lines.push(...s.trimEnd().split('\n')), true) };
}

describe('fleet view', () => {
  it('converged only when every node is Ready and every expected mirror exists and is Running', () => {
    assert.equal(isConverged(done), true);
    assert.equal(isConverged({ ...done, nodesReady: 2 }), false);
    assert.equal(isConverged({ ...done, running: 8 }), false);
    assert.equal(isConverged({ ...done, mirrors: 10 }), false, 'a mirror too many (an old one not yet deleted) is not converged');
    assert.equal(isConverged(progress({ nodesReady: 3, expected: 0 })), false, 'no static pods read yet');
  });

  it("with the demo's Deployment: converged only once every pod of it is placed and Running", () => {
    assert.equal(isConverged({ ...done, deployment: { desired: 2, placed: 2, running: 2 } }), true);
    assert.equal(isConverged({ ...done, deployment: { desired: 2, placed: 2, running: 1 } }), false);
    assert.equal(isConverged({ ...done, deployment: { desired: 2, placed: 1, running: 1 } }), false);
  });

  it('a progress line with the Deployment: its pods placed and Running after the mirrors', () => {
    assert.equal(
      progressLine({ ...done, deployment: { desired: 2, placed: 2, running: 2 } }),
      '4.2 s · nodes Ready 3/3 · mirrors created 9/9 · Running 9/9 · deployment placed 2/2 · Running 2/2 · API 12.3 req/s · converged',
    );
    assert.equal(
      progressLine({ ...done, deployment: { desired: 2, placed: 1, running: 0 } }),
      '4.2 s · nodes Ready 3/3 · mirrors created 9/9 · Running 9/9 · deployment placed 1/2 · Running 0/2 · API 12.3 req/s',
    );
  });

  it('the terminal view: bars for the Deployment too, aligned, and the details below', () => {
    const lines = renderFleetView({ ...done, deployment: { desired: 2, placed: 2, running: 1 } });
    assert.match(lines[3]!, /^deployment placed  \[#{30}\] 2\/2$/);
    assert.match(lines[4]!, /^deployment Running \[#{15}\.{15}\] 1\/2$/);
    assert.equal(lines[0]!.indexOf('['), lines[4]!.indexOf('['), 'the bars line up');
    const out = { isTTY: true, text: '', write: (s: string) => ((out.text += s), true) };
    const view = startFleetLiveView({ header: ['HEADER'], progress: () => done, details: () => ['scheduler sees: X'], out, refreshMs: 500, clock: new FakeClock() });
    view.stop();
    assert.match(out.text, /· converged\n\nscheduler sees: X\n$/);
  });

  it('off a terminal, the details (what the scheduler sees) once converged, and again at the end only if they changed', async () => {
    const clock = new FakeClock();
    const out = logStream();
    let current = progress();
    let details = ['scheduler sees: A'];
    const view = startFleetLiveView({ header: ['HEADER'], progress: () => current, details: () => details, out, refreshMs: 500, clock });
    await clock.advance(1_000);
    assert.ok(!out.lines.includes('scheduler sees: A'), 'not while converging');
    current = done;
    await clock.advance(500);
    assert.deepEqual(out.lines.slice(-2), [progressLine(done), 'scheduler sees: A']);
    await clock.advance(2_000);
    assert.equal(out.lines.filter((l) => l.startsWith('scheduler sees')).length, 1, 'once');
    details = ['scheduler sees: B'];
    view.stop();
    assert.equal(out.lines.at(-1), 'scheduler sees: B', 'changed since: printed at the end');
  });

  it('off a terminal, a last progress line written at the end is followed by the details again', async () => {
    const clock = new FakeClock();
    const out = logStream();
    let current = done;
    const view = startFleetLiveView({ header: ['HEADER'], progress: () => current, details: () => ['scheduler sees: A'], out, refreshMs: 500, clock });
    assert.deepEqual(out.lines.slice(-2), [progressLine(done), 'scheduler sees: A']);
    current = { ...done, requestsPerSecond: done.requestsPerSecond + 1 };
    view.stop();
    assert.deepEqual(out.lines.slice(-2), [progressLine(current), 'scheduler sees: A'], 'the output ends with the details');
  });

  it('a progress line names every count against its total, and the rate', () => {
    assert.equal(progressLine(done), '4.2 s · nodes Ready 3/3 · mirrors created 9/9 · Running 9/9 · API 12.3 req/s · converged');
    assert.equal(progressLine(progress({ nodesReady: 1, mirrors: 4, running: 2 })), '0.0 s · nodes Ready 1/3 · mirrors created 4/9 · Running 2/9 · API 0.0 req/s');
  });

  it('the terminal view has a bar per count', () => {
    const lines = renderFleetView(progress({ nodesReady: 3, mirrors: 3, running: 0 }));
    assert.match(lines[0]!, /^nodes Ready\s+\[#{30}\] 3\/3$/);
    assert.match(lines[1]!, /^mirrors created\s+\[#{10}\.{20}\] 3\/9$/);
    assert.match(lines[2]!, /^mirrors Running\s+\[\.{30}\] 0\/9$/);
  });

  it('the rate is over the recent window, not since the start', async () => {
    const clock = new FakeClock();
    let count = 0;
    const meter = createRateMeter(() => count, clock, 5_000);
    assert.equal(meter.sample(), 0);
    for (let i = 0; i < 10; i++) {
      await clock.advance(1_000);
      count += 100; // 100 req/s for 10 s
      meter.sample();
    }
    for (let i = 0; i < 10; i++) {
      await clock.advance(1_000);
      count += 2; // then 2 req/s
      meter.sample();
    }
    assert.ok(Math.abs(meter.sample() - 2) < 0.01, `about 2 req/s, got ${meter.sample()}`);
  });

  it('off a terminal: the header once, a line per change (and every 10 s), a last line on stop; converged resolves', async () => {
    const clock = new FakeClock();
    const out = logStream();
    let current = progress();
    const view = startFleetLiveView({ header: ['HEADER'], progress: () => current, out, refreshMs: 500, clock });
    let converged = false;
    void view.converged.then(() => (converged = true));
    await clock.advance(2_000);
    assert.deepEqual(out.lines, ['HEADER', progressLine(progress())], 'nothing changed: no new line');
    current = progress({ nodesReady: 2, mirrors: 3 });
    await clock.advance(500);
    assert.equal(out.lines.length, 3);
    await clock.advance(PROGRESS_LINE_EVERY_MS);
    assert.equal(out.lines.length, 4, 'a line every 10 s even without a change');
    assert.equal(converged, false);
    current = done;
    await clock.advance(500);
    await Promise.resolve();
    assert.equal(converged, true);
    view.stop();
    assert.equal(out.lines.at(-1), progressLine(done));
    assert.equal(out.lines.filter((l) => l === 'HEADER').length, 1);
    assert.equal(clock.pendingTimers, 0, 'stop() clears the timer');
  });
});
