// The agent's GC setting (src/cli/run-gc-settings.ts), set from inside the process: the young
// generation stays at its starting size through a burst of allocation, where V8's default
// grows it; what node was started with wins.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { applyRunGcSettings } from '../../../src/cli/run-gc-settings.js';

const MODULE = fileURLToPath(new URL('../../../src/cli/run-gc-settings.js', import.meta.url));

/** The largest size of V8's new space seen through a burst of short-lived allocation, in bytes. */
async function peakNewSpace(apply: boolean, nodeFlags: readonly string[] = []): Promise<number> {
  const script = `
    import v8 from 'node:v8';
    import { applyRunGcSettings } from ${JSON.stringify(MODULE)};
    if (${apply}) applyRunGcSettings(process.execArgv);
    const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    let peak = newSpace();
    const kept = [];
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 50000; i++) {
        const o = { i, s: 'x' + i, a: [i, i + 1] };
        if (i % 8 === 0) kept.push(o);
      }
      if (kept.length > 100000) kept.length = 0;
      peak = Math.max(peak, newSpace());
    }
    process.stdout.write(String(peak));`;
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, '--input-type=module', '-e', script]);
  return Number(stdout);
}

describe('run GC settings', () => {
  it('keeps the young generation at its starting size where V8 would grow it', async () => {
    const grown = await peakNewSpace(false);
    const kept = await peakNewSpace(true);
    assert.ok(kept * 4 <= grown, `new space peaked at ${kept} bytes with the setting, ${grown} without`);
  });

  it('leaves the young generation alone when node was started with a setting of its own', async () => {
    assert.deepEqual(applyRunGcSettings(['--max-semi-space-size=64']), []);
    assert.deepEqual(applyRunGcSettings(['--semi_space_growth_factor=4']), []);
    assert.deepEqual(applyRunGcSettings(['--min-semi-space-size', '8']), []);
    const own = await peakNewSpace(true, ['--semi-space-growth-factor=2']);
    const kept = await peakNewSpace(true);
    assert.ok(kept * 4 <= own, `new space peaked at ${kept} bytes with the setting, ${own} when node's flag wins`);
  });
});
