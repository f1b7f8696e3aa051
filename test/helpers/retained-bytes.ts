// What `make` leaves on the heap per call, on average over `count` calls whose results are kept:
// for tests that a per-pod structure stays within a size. A full GC before and after each
// reading; the array holding the results is left out.
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
  const before = await settle();
  for (let i = 0; i < count; i++) kept[i] = make(i);
  const after = await settle();
  const bytes = (after - before) / count;
  if (process.env.RETAINED_BYTES_LOG) console.log(`retained ${bytes.toFixed(1)} bytes per call`);
  kept.fill(undefined);
  return bytes;
}
