// The heap snapshot census (bench/agent/heap-attribution.ts): objects counted by their shape,
// arrays by the field that holds them, and what grew between two snapshots per pod, read from
// real snapshots of this process.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

import { census, censusGrowth, readSnapshot } from '../../../bench/agent/heap-attribution.js';

class CensusProbeRecord {
  censusProbeName: string;
  #censusProbeHidden = 1;
  constructor(name: string) {
    this.censusProbeName = name;
  }
  // A private method gives each instance a brand, which the snapshot shows as a property.
  #read(): number {
    return this.#censusProbeHidden;
  }
  hidden(): number {
    return this.#read();
  }
}

describe('heap snapshot census', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heap-census-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const held: unknown[] = [];
  const snapshot = (name: string): ReturnType<typeof census> => census(readSnapshot(writeHeapSnapshot(join(dir, name))));

  it('counts objects by constructor and fields, arrays by the field holding them, and the growth per pod', () => {
    const before = snapshot('before.heapsnapshot');
    for (let i = 0; i < 300; i++) {
      held.push({ censusProbeA: `a${i}`, censusProbeB: { i }, censusProbeList: [i, i + 1] });
      held.push(new CensusProbeRecord(`r${i}`));
    }
    const afterPods = snapshot('after.heapsnapshot');

    const plain = afterPods.get('Object {censusProbeA,censusProbeB,censusProbeList}');
    assert.ok(plain !== undefined, 'the plain objects have a shape of their own');
    // The 300, and perhaps the literal's boilerplate V8 keeps to make them.
    assert.ok(plain.count === 300 || plain.count === 301, `${plain.count} objects`);
    // Three fields and the object's header: more than three pointers each, however V8 lays it out.
    assert.ok(plain.bytes >= 300 * 3 * 4, `${plain.bytes} bytes`);
    assert.equal(afterPods.get('Array in .censusProbeList')?.count, 300);
    // The private brand of a class is not one of its fields.
    assert.equal(afterPods.get('CensusProbeRecord {censusProbeName}')?.count, 300);

    const growth = censusGrowth(before, afterPods, 100);
    const row = growth.find((r) => r.shape === 'Object {censusProbeA,censusProbeB,censusProbeList}');
    assert.ok(row !== undefined);
    assert.equal(row.perPod, plain.count / 100);
    assert.equal(row.bytesPerPod, plain.bytes / 100);
    assert.equal(before.get('Object {censusProbeA,censusProbeB,censusProbeList}'), undefined);
    assert.ok(growth.every((r, i) => i === 0 || growth[i - 1]!.bytesPerPod >= r.bytesPerPod), 'most bytes first');
    assert.equal(held.length, 600);
  });
});
