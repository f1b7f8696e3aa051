// The fleet's V8 headroom (src/fleet/heap-headroom.ts): set from inside the process, it changes
// the factor V8 uses after a full GC; node's own flag and 0 leave V8 alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { applyHeapGrowingPercent } from '../../../src/fleet/heap-headroom.js';

const MODULE = fileURLToPath(new URL('../../../src/fleet/heap-headroom.js', import.meta.url));

/** The factors V8 reports choosing (`--trace-gc-verbose`) in a node that applies `percent`, then runs full GCs. */
async function factorsAfter(percent: number): Promise<string[]> {
  const script = `
    import { applyHeapGrowingPercent } from ${JSON.stringify(MODULE)};
    applyHeapGrowingPercent(${percent});
    const kept = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 50000; i++) kept.push({ i, s: 'x' + i });
      globalThis.gc();
    }`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--trace-gc-verbose', '--input-type=module', '-e', script], { maxBuffer: 64 * 2 ** 20 });
  // V8 11 (Node 20) prints the factor it applied at the end of its limit line.
  return [...stdout.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)$/gm)].map((m) => m[1]!);
}

describe('heap growing percent', () => {
  it('sets the factor V8 uses after each full GC, from inside the process', async () => {
    const factors = await factorsAfter(150);
    assert.ok(factors.length >= 3, `V8 reported ${factors.length} factors`);
    assert.deepEqual(new Set(factors), new Set(['2.5']));
  });

  it('0 leaves the sizing to V8', async () => {
    const factors = await factorsAfter(0);
    assert.ok(factors.length >= 3, `V8 reported ${factors.length} factors`);
    assert.ok(!factors.includes('2.5'), `factors ${factors.join(', ')}`);
  });

  it("node's own flag wins, in either spelling", () => {
    assert.equal(applyHeapGrowingPercent(100, ['--heap-growing-percent=30']), undefined);
    assert.equal(applyHeapGrowingPercent(100, ['--heap_growing_percent', '30']), undefined);
    assert.equal(applyHeapGrowingPercent(0, []), undefined);
  });
});
