// The garbage collector setting of a `kubelet-pods run` process, made from inside it.
//
// While a burst of pods converges, V8 doubles its young generation up to two 16 MiB
// semi-spaces and gives them back only after a full mark-compact, which an agent at rest rarely
// runs: so an idle agent kept 32 MiB it no longer used, and with 100 static pods held more than
// the kubelet (docs/performance.md, "The agent without client-node's generated models"). A
// growth factor of 1 keeps the young generation at its starting size. V8 reads the flag each
// time it would grow the young generation, so setting it in the running process works, in the
// single executable too.

import v8 from 'node:v8';
import { YOUNG_GENERATION_FLAG } from '../fleet/gc-settings.js';

/** The young generation never grows past its starting size. */
export const RUN_SEMI_SPACE_GROWTH_FACTOR = 1;

/**
 * Applies the agent's GC setting to this process unless node was started with a setting of its
 * own for the young generation (`--semi-space-growth-factor`, `--max-semi-space-size`,
 * `--min-semi-space-size`). Returns the V8 flags it set.
 */
export function applyRunGcSettings(execArgv: readonly string[] = process.execArgv): string[] {
  if (execArgv.some((arg) => YOUNG_GENERATION_FLAG.test(arg))) return [];
  const flag = `--semi-space-growth-factor=${RUN_SEMI_SPACE_GROWTH_FACTOR}`;
  v8.setFlagsFromString(flag);
  return [flag];
}
