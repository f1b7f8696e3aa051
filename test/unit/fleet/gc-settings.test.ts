// The fleet's GC settings (src/fleet/gc-settings.ts), set from inside the process: V8 then uses
// the headroom asked for after each full GC and scavenges without its helper threads; what
// node was started with, and the settings that ask for V8's defaults, leave V8 alone.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { applyFleetGcSettings, FLEET_GC_DEFAULTS, type FleetGcSettings } from '../../../src/fleet/gc-settings.js';

const MODULE = fileURLToPath(new URL('../../../src/fleet/gc-settings.js', import.meta.url));

/** V8's GC trace (`traceFlag`) of a node that applies `settings`, then allocates, keeping a quarter, with full GCs between rounds. */
async function traceAfter(settings: FleetGcSettings, traceFlag: string): Promise<string> {
  const script = `
    import { applyFleetGcSettings } from ${JSON.stringify(MODULE)};
    applyFleetGcSettings(${JSON.stringify(settings)});
    const kept = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 200000; i++) {
        const o = { i, s: 'x' + i };
        if (i % 4 === 0) kept.push(o);
      }
      globalThis.gc();
    }`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', traceFlag, '--input-type=module', '-e', script], { maxBuffer: 64 * 2 ** 20 });
  return stdout;
}

/** The growing factors V8 applied after full GCs (V8 11, Node 20: at the end of its limit line). */
const factors = (trace: string): string[] => [...trace.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)$/gm)].map((m) => m[1]!);

/** The helper threads' time in each scavenge, ms. */
const helperScavengeMs = (trace: string): number[] => [...trace.matchAll(/gc=s .*?background\.scavenge\.parallel=([\d.]+)/g)].map((m) => Number(m[1]));

describe('fleet GC settings', () => {
  it('the headroom sets the factor V8 uses after each full GC; 0 leaves the sizing to V8', async () => {
    const set = factors(await traceAfter({ heapGrowingPercent: 150, parallelScavenge: true }, '--trace-gc-verbose'));
    assert.ok(set.length >= 4, `V8 reported ${set.length} factors`);
    assert.deepEqual(new Set(set), new Set(['2.5']));
    const own = factors(await traceAfter({ heapGrowingPercent: 0, parallelScavenge: true }, '--trace-gc-verbose'));
    assert.ok(own.length >= 4, `V8 reported ${own.length} factors`);
    assert.ok(!own.includes('2.5'), `factors ${own.join(', ')}`);
  });

  it('scavenges run on the main thread alone unless parallelScavenge is true', async () => {
    const alone = helperScavengeMs(await traceAfter(FLEET_GC_DEFAULTS, '--trace-gc-nvp'));
    assert.ok(alone.length >= 5, `${alone.length} scavenges`);
    assert.deepEqual(new Set(alone), new Set([0]));
    const shared = helperScavengeMs(await traceAfter({ ...FLEET_GC_DEFAULTS, parallelScavenge: true }, '--trace-gc-nvp'));
    assert.ok(shared.some((ms) => ms > 0), `helpers' times ${shared.join(', ')}`);
  });

  it("leaves alone what node was started with, in either spelling", () => {
    assert.deepEqual(applyFleetGcSettings({ heapGrowingPercent: 0, parallelScavenge: true }, []), []);
    assert.deepEqual(applyFleetGcSettings(FLEET_GC_DEFAULTS, ['--heap-growing-percent=30', '--parallel-scavenge']), []);
    assert.deepEqual(applyFleetGcSettings(FLEET_GC_DEFAULTS, ['--heap_growing_percent', '30', '--single-threaded-gc']), []);
    assert.deepEqual(applyFleetGcSettings({ heapGrowingPercent: 0, parallelScavenge: false }, ['--no_parallel_scavenge']), []);
  });
});
