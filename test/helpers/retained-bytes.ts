// What `make` leaves on the heap per call, on average over `count` calls whose results are kept:
// for tests that a per-pod structure stays within a size. A full GC before and after each
// reading; the array holding the results is left out. The first fifth of the calls run before
// the first reading: the code V8 compiles for `make` on its way, and the structures a first
// call of a kind sets up, are not what a call keeps, and they moved the readings between
// processes.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export async function retainedBytesPer(count: number, make: (i: number) => unknown): Promise<number> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const kept = new Array<unknown>(count).fill(undefined);
  // Objects a job made (WeakRefs among them) live to its end; settle before each reading.
  const settle = async (): Promise<number> => {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const warm = count >= 100 ? Math.floor(count / 5) : 0;
  for (let i = 0; i < warm; i++) kept[i] = make(i);
  const before = await settle();
  for (let i = warm; i < count; i++) kept[i] = make(i);
  const after = await settle();
  const bytes = (after - before) / (count - warm);
  if (process.env.RETAINED_BYTES_LOG) console.log(`retained ${bytes.toFixed(1)} bytes per call`);
  kept.fill(undefined);
  return bytes;
}
