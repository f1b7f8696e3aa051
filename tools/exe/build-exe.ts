// `npm run build:exe`: the single `kubelet-pods` executable, built the way Node 20 builds a
// single executable application (SEA): esbuild bundles dist/cli/main.js and everything it
// imports into one CommonJS script, `node --experimental-sea-config` turns it and the
// embedded files into a blob, and postject injects that blob into a copy of the node binary.
//
// The result needs no node_modules and no checkout beside it. It embeds, as SEA assets read
// by src/sea/embedded-files.ts, the control plane's Go sources (for `local-cluster` and
// `demo`, which still need Go >= 1.24 to build the control plane once, or
// KUBELET_PODS_CONTROL_PLANE naming a built one) and examples/ (for `demo`).
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire, isBuiltin } from 'node:module';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { build, type Plugin } from 'esbuild';

const execFileAsync = promisify(execFile);
const require = createRequire(import.meta.url);

/** The package root, from tools/exe/ (ts) and build/tools/exe/ (js) alike. */
export const PACKAGE_ROOT = ((): string => {
  const here = fileURLToPath(new URL('.', import.meta.url));
  return here.includes(`${sep}build${sep}tools${sep}`) ? resolve(here, '../../..') : resolve(here, '../..');
})();

/** Where the executable is written, relative to the package root (gitignored). */
export const EXE_OUT_DIR = 'dist-exe';
export const EXE_NAME = 'kubelet-pods';

/** The fuse Node looks for to know that a blob has been injected (the value Node documents). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** Must match EMBEDDED_INDEX_KEY in src/sea/embedded-files.ts. */
const EMBEDDED_INDEX_KEY = 'kubelet-pods/embedded-files.json';

/**
 * Optional modules that dependencies load inside try/catch and work without. In the
 * executable, `require` only loads Node's built-in modules, and requiring anything else also
 * prints a warning on every start; so each of these is bundled as a stub that throws
 * MODULE_NOT_FOUND, exactly what the dependency sees when the module is not installed.
 */
const ABSENT_OPTIONAL_MODULES: Readonly<Record<string, string>> = {
  encoding: 'node-fetch (via client-node): converting non-UTF-8 bodies, never used for API responses',
  'supports-color': 'debug: colour detection for debug output',
  bufferutil: 'ws: a native speed-up of WebSocket masking',
  'utf-8-validate': 'ws: a native speed-up of UTF-8 checks',
};

/** The package files the executable carries (paths relative to the package root). */
async function embeddedFiles(root: string): Promise<string[]> {
  const controlPlane = (await readdir(join(root, 'tools/control-plane')))
    .filter((n) => n.endsWith('.go') || n === 'go.mod' || n === 'go.sum')
    .map((n) => `tools/control-plane/${n}`);
  const examples = (await readdir(join(root, 'examples'), { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));
  return [...controlPlane, ...examples].sort();
}

const absentModulesPlugin: Plugin = {
  name: 'absent-optional-modules',
  setup(b) {
    const names = Object.keys(ABSENT_OPTIONAL_MODULES).map((n) => n.replace(/[^\w]/g, '\\$&'));
    b.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => ({ path: args.path, namespace: 'absent' }));
    b.onLoad({ filter: /.*/, namespace: 'absent' }, (args) => ({
      contents:
        `const err = new Error(${JSON.stringify(`Cannot find module '${args.path}' (not part of the kubelet-pods executable)`)});\n` +
        `err.code = 'MODULE_NOT_FOUND';\nthrow err;\n`,
      loader: 'js',
    }));
  },
};

/**
 * Bundles `entry` (an ES module of dist/ or build/) and everything it imports into one CommonJS
 * script at `outfile`, as the executable carries it. The side-by-side benchmark runs its agent
 * child from such a bundle, so that its start-up is the executable's.
 */
export function bundleScript(entry: string, outfile: string) {
  return build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    define: { 'import.meta.url': '__kubeletPodsModuleURL' },
    banner: { js: "var __kubeletPodsModuleURL = require('node:url').pathToFileURL(__filename).href;" },
    plugins: [absentModulesPlugin],
    metafile: true,
    logLevel: 'silent',
  });
}

export interface BuildExecutableOptions {
  /** The package root (default: this checkout). dist/ must have been built (`npm run build`). */
  root?: string;
  /** Output directory (default `<root>/dist-exe`). */
  outDir?: string;
  /** Progress lines; default stderr. */
  log?: (line: string) => void;
}

export interface BuiltExecutable {
  path: string;
  /** Size of the executable in bytes. */
  bytes: number;
  /** Size of the bundled script in bytes. */
  bundleBytes: number;
  /** Number of embedded package files. */
  embeddedFiles: number;
  /** Wall time of the whole build in seconds. */
  seconds: number;
}

export async function buildExecutable(options: BuildExecutableOptions = {}): Promise<BuiltExecutable> {
  const started = Date.now();
  const root = options.root ?? PACKAGE_ROOT;
  const outDir = options.outDir ?? join(root, EXE_OUT_DIR);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const work = join(outDir, '.work');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });

  const entry = join(root, 'dist/cli/main.js');
  await stat(entry).catch((err: unknown) => {
    throw new Error(`build:exe: ${entry} is missing; run \`npm run build\` first`, { cause: err });
  });

  // 1. One CommonJS script. `import.meta.url` does not exist in CommonJS: it becomes the
  // executable's own file URL (in a SEA, __filename is the executable), so code that resolves
  // package files next to itself finds nothing there and falls back to the embedded assets.
  const bundle = join(work, 'main.cjs');
  const result = await bundleScript(entry, bundle);
  if (result.warnings.length > 0) {
    const text = result.warnings.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''}: ${w.text}`).join('\n');
    throw new Error(`build:exe: the bundle has warnings (each one may break the executable):\n${text}`);
  }
  // Anything still left to `require` at run time would fail in the executable.
  const unresolved = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports) if (imp.external && !isBuiltin(imp.path)) unresolved.add(imp.path);
  }
  if (unresolved.size > 0) {
    throw new Error(
      `build:exe: the bundle still requires ${[...unresolved].map((m) => JSON.stringify(m)).join(', ')} at run time; ` +
        'bundle it, or list it in ABSENT_OPTIONAL_MODULES if the dependency works without it',
    );
  }
  const bundleBytes = (await stat(bundle)).size;

  // 2. The preparation blob, with the embedded files as assets.
  const files = await embeddedFiles(root);
  const index = join(work, 'embedded-files.json');
  await writeFile(index, JSON.stringify({ files }));
  const assets: Record<string, string> = { [EMBEDDED_INDEX_KEY]: index };
  for (const file of files) assets[file] = join(root, file);
  const blob = join(work, 'sea-prep.blob');
  const seaConfig = join(work, 'sea-config.json');
  await writeFile(
    seaConfig,
    JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: false, assets }, null, 2),
  );
  await execFileAsync(process.execPath, ['--experimental-sea-config', seaConfig], { cwd: work });

  // 3. A copy of this node binary with the blob injected. Written under a temporary name and
  // renamed into place, so a failed build never leaves a broken executable behind.
  const temp = join(work, EXE_NAME);
  await copyFile(process.execPath, temp);
  await chmod(temp, 0o755);
  const { inject } = require('postject') as {
    inject(file: string, resource: string, data: Buffer, options: { sentinelFuse: string }): Promise<void>;
  };
  // postject's ELF code warns about notes sections it does not need to touch ("Can't find
  // string offset for section name '.note…'") on every build; only those lines are dropped.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!/Can't find string offset for section name '\.note/.test(String(args[0]))) warn(...args);
  };
  try {
    await inject(temp, 'NODE_SEA_BLOB', await readFile(blob), { sentinelFuse: SEA_FUSE });
  } finally {
    console.warn = warn;
  }
  const exe = join(outDir, EXE_NAME);
  await rename(temp, exe);
  await rm(work, { recursive: true, force: true });

  const built: BuiltExecutable = {
    path: exe,
    bytes: (await stat(exe)).size,
    bundleBytes,
    embeddedFiles: files.length,
    seconds: (Date.now() - started) / 1000,
  };
  log(
    `built ${relative(process.cwd(), exe) || exe} in ${built.seconds.toFixed(1)} s: ` +
      `${(built.bytes / 1e6).toFixed(1)} MB (node ${process.version} + a ${(bundleBytes / 1e6).toFixed(1)} MB bundle, ` +
      `${files.length} embedded files)`,
  );
  return built;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildExecutable().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
