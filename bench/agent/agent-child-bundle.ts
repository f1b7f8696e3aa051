// The agent child bundled the way kubelet-pods ships, so that the side-by-side benchmark
// starts ours as users start it. By default (BENCH_SBS_BUNDLED unset or `bin`) as the npm
// package's command is bundled (tools/exe/bin-bundle.ts: ES modules, client-node left in
// node_modules); BENCH_SBS_BUNDLED=exe (or 1) as one CommonJS script, the way `npm run build:exe`
// bundles the executable (tools/exe/build-exe.ts) that the container image and the systemd unit
// run; BENCH_SBS_BUNDLED=0 from build/'s separate modules (docs/performance.md, "Restart").
import { fileURLToPath } from 'node:url';
import { bundleLikeBin } from '../../tools/exe/bin-bundle.js';
import { bundleScript } from '../../tools/exe/build-exe.js';

export type AgentChildBundle = 'bin' | 'exe' | 'none';

/** Which bundle BENCH_SBS_BUNDLED asks for. */
export function agentChildBundle(value = process.env.BENCH_SBS_BUNDLED): AgentChildBundle {
  if (value === undefined || value === '' || value === 'bin') return 'bin';
  if (value === 'exe' || value === '1') return 'exe';
  if (value === '0' || value === 'none') return 'none';
  throw new Error(`BENCH_SBS_BUNDLED must be bin, exe (1) or none (0), got ${JSON.stringify(value)}`);
}

const built = new Map<AgentChildBundle, Promise<string | undefined>>();

/** The script to fork for the agent child (undefined: build/'s own agent-child.js), built once per benchmark process. */
export function bundledAgentChild(kind: AgentChildBundle = agentChildBundle()): Promise<string | undefined> {
  let script = built.get(kind);
  if (script === undefined) {
    script = bundle(kind);
    built.set(kind, script);
  }
  return script;
}

async function bundle(kind: AgentChildBundle): Promise<string | undefined> {
  const entry = fileURLToPath(new URL('./agent-child.js', import.meta.url));
  if (kind === 'none') return undefined;
  if (kind === 'bin') return bundleLikeBin(entry, fileURLToPath(new URL('./agent-child-bin/', import.meta.url)));
  const outfile = fileURLToPath(new URL('./agent-child.bundle.cjs', import.meta.url));
  const result = await bundleScript(entry, outfile);
  if (result.errors.length > 0 || result.warnings.length > 0) {
    throw new Error(`bundling ${entry}: ${[...result.errors, ...result.warnings].map((m) => m.text).join('; ')}`);
  }
  return outfile;
}
