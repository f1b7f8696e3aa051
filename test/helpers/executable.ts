// The single `kubelet-pods` executable (`npm run build:exe`), built for a test file into a
// temporary directory of its own, then copied alone into an empty one: what runs there has
// nothing but itself (no node_modules, no dist/, no checkout).
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { buildExecutable, EXE_NAME, type BuiltExecutable } from '../../tools/exe/build-exe.js';

export interface TestExecutable {
  /** The executable, alone in `dir`. */
  readonly path: string;
  readonly dir: string;
  readonly build: BuiltExecutable;
  dispose(): Promise<void>;
}

/** Builds the executable (about 3 s on 2 cores; dist/ must be built) and isolates a copy. */
export async function buildTestExecutable(): Promise<TestExecutable> {
  const outDir = await mkdtemp(join(tmpdir(), 'kp-exe-build-'));
  const dir = await mkdtemp(join(tmpdir(), 'kp-exe-'));
  try {
    const build = await buildExecutable({ outDir, log: () => {} });
    const path = join(dir, EXE_NAME);
    await copyFile(build.path, path);
    await rm(outDir, { recursive: true, force: true });
    return {
      path,
      dir,
      build,
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    await rm(outDir, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
