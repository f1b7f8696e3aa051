// The npm package's `kubelet-pods` command as a few ES modules instead of hundreds: `npm run
// build` bundles dist/cli/main.js with esbuild into dist/bin/ (package.json `build:bin`), and
// the package's `bin` points there. Loading ~600 separate files cost a restarted agent more CPU
// than everything else it does before its Node is Ready (docs/performance.md, "Start and
// restart → Node Ready"). Subcommands and other lazy imports stay separate chunks, loaded when
// asked for; client-node stays outside, loaded from node_modules only by the kubeconfigs that
// need it (exec plugins, auth providers), so its 15 MB are never parsed on the agent's path.
//
// The flags live here once: package.json's script must spell exactly these (a unit test checks),
// and the side-by-side benchmark bundles its agent child with them.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from './build-exe.js';

/** Where `npm run build` writes the bundled command, relative to the package root. */
export const BIN_BUNDLE_DIR = 'dist/bin';

/** The packages left to load from node_modules at run time. */
export const BIN_BUNDLE_EXTERNAL: readonly string[] = ['@kubernetes/client-node'];

/**
 * esbuild's flags for the command's bundle, written to `outdir`. The banner gives every chunk a
 * `require` of its own: the CommonJS dependencies bundled in call it for Node's built-in modules.
 */
export function binBundleFlags(outdir: string): string[] {
  return [
    '--bundle',
    '--splitting',
    '--format=esm',
    '--platform=node',
    '--target=node20',
    `--outdir=${outdir}`,
    ...BIN_BUNDLE_EXTERNAL.map((name) => `--external:${name}`),
    '--banner:js=import{createRequire as __kpCreateRequire}from"node:module";const require=__kpCreateRequire(import.meta.url);',
    '--log-level=warning',
  ];
}

/** The command line of package.json's `build:bin` script, as a shell reads it. */
export function binBundleScript(): string {
  return ['esbuild', 'dist/cli/main.js', ...binBundleFlags(BIN_BUNDLE_DIR)].map(shellWord).join(' ');
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Bundles `entry` (an ES module of dist/ or build/) the way the command is bundled, into
 * `outdir`; resolves with the path of the entry's bundle. The package's node_modules must be
 * reachable from `outdir` for the external packages.
 */
export async function bundleLikeBin(entry: string, outdir: string): Promise<string> {
  const esbuild = join(PACKAGE_ROOT, 'node_modules', '.bin', 'esbuild');
  await promisify(execFile)(esbuild, [entry, ...binBundleFlags(outdir)]);
  const base = entry.split(/[\\/]/).pop()!;
  return join(outdir, base);
}
