// The agent child as one CommonJS script, bundled the way `npm run build:exe` bundles the
// executable (tools/exe/build-exe.ts), which is what the container image and the systemd unit
// run: BENCH_SBS_BUNDLED=1 makes the side-by-side benchmark start ours from it, to measure the
// executable's start-up (docs/performance.md, "Restart").
import { fileURLToPath } from 'node:url';
import { bundleScript } from '../../tools/exe/build-exe.js';

let bundled: Promise<string> | undefined;

/** The path of the bundled agent child, built once per benchmark process. */
export function bundledAgentChild(): Promise<string> {
  bundled ??= (async () => {
    const entry = fileURLToPath(new URL('./agent-child.js', import.meta.url));
    const outfile = fileURLToPath(new URL('./agent-child.bundle.cjs', import.meta.url));
    const result = await bundleScript(entry, outfile);
    if (result.errors.length > 0 || result.warnings.length > 0) {
      throw new Error(`bundling ${entry}: ${[...result.errors, ...result.warnings].map((m) => m.text).join('; ')}`);
    }
    return outfile;
  })();
  return bundled;
}
