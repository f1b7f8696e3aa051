// Builds and caches the Go programs under tools/ that run real Kubernetes parts next to
// kubelet-pods (the control plane, the hollow kubelet). Each one is described once (a
// GoTool) and built by the same code: keyed on a hash of its sources, cached outside the
// checkout, progress lines while `go build` runs.
import { spawn, execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { constants as fsConstants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { kpError } from '../errors.js';
import { extractEmbeddedTree } from '../sea/embedded-files.js';

const execFileAsync = promisify(execFile);

/** The oldest Go that builds Kubernetes v1.34 (its go.mod says `go 1.24`). */
const MIN_GO: readonly [number, number] = [1, 24];

/** One Go program under tools/ and how to talk about it while it builds. */
export interface GoTool {
  /** The directory name under tools/, also the cache entry prefix (`<id>-<hash>`). */
  readonly id: string;
  /** The file name of the built program inside its cache directory. */
  readonly binaryName: string;
  /** What it is, for progress lines and errors ("the local control plane"). */
  readonly title: string;
  /** Names an already built program to use instead of building (e.g. in a CI image). */
  readonly binaryEnv: string;
  /**
   * Extra `go build` arguments. They change what the build produces, so when there are any
   * they are part of the cache key; a tool without them keeps the plain source hash.
   */
  readonly buildArgs?: readonly string[];
  /**
   * The package to build, when it is not the module's own directory: a main package of a
   * required module (kwok's `sigs.k8s.io/kwok/cmd/kwok`, pinned by go.mod's `tool` line), so
   * the program is built from its upstream module without a copy of its main in tools/. Part
   * of the cache key when set.
   */
  readonly buildPackage?: string;
  /** Roughly how many packages the program has, for "N of about M" progress lines. */
  readonly approxPackages: number;
  /** How long a first build takes with nothing in Go's build cache, for the first progress line. */
  readonly firstBuildEstimate: string;
}

export interface GoToolBuildOptions {
  /**
   * The Go module to build; defaults to tools/<id> of this package, in a checkout or an
   * installed package alike (the control plane's Go sources ship in the package; the hollow
   * kubelet's do not). The single executable carries the control plane's sources as assets
   * and extracts them under `<cacheRoot>/sources/` instead.
   */
  sourceDir?: string;
  /**
   * Root of the binary cache; defaults to `$XDG_CACHE_HOME/kubelet-pods` (or
   * `~/.cache/kubelet-pods`), outside the checkout so fresh clones on one machine share it.
   */
  cacheRoot?: string;
  /** Progress lines for a human; defaults to stderr. Pass `() => {}` for silence. */
  progress?: (line: string) => void;
  /** Minimum pause between two "building… N packages" lines. Default 5 s. */
  progressIntervalMs?: number;
  /** The `go` command; default `go` from PATH. */
  goCommand?: string;
}

export interface GoToolBinary {
  path: string;
  /** True when this call ran `go build`, false when the cache (or the env override) had it. */
  built: boolean;
  /** The hash the cache directory is named after ('' for the env override). */
  sourceHash: string;
}

/** What besides the sources decides the program: the build arguments, and the package when it is not `.`. */
function cacheKeyArgs(tool: GoTool): readonly string[] {
  const args = tool.buildArgs ?? [];
  return tool.buildPackage === undefined ? args : [...args, `package=${tool.buildPackage}`];
}

/** tools/<id> relative to this file, from both src/ (ts) and an output dir such as build/src/ (js). */
export function defaultToolSourceDir(id: string): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const candidate = resolve(here, up, 'tools', id);
    if (existsSync(join(candidate, 'go.mod'))) return candidate;
  }
  return resolve(here, '../..', 'tools', id);
}

export function defaultCacheRoot(): string {
  const xdg = process.env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
  return join(base, 'kubelet-pods');
}

/**
 * Hash of everything that decides what the build produces: every *.go file plus go.mod and
 * go.sum, by name and content, and the extra build arguments if there are any. The Go
 * toolchain version is deliberately left out: any Go >= 1.24 builds the same program, and
 * rebuilding after a Go upgrade would cost about 11 min on 2 cores.
 *
 * Without build arguments the value is exactly the control plane's historical key, so
 * existing caches stay valid.
 */
export async function goSourceHash(sourceDir: string, buildArgs: readonly string[] = []): Promise<string> {
  const names = (await readdir(sourceDir))
    .filter((n) => n.endsWith('.go') || n === 'go.mod' || n === 'go.sum')
    .sort();
  const hash = createHash('sha256');
  for (const name of names) {
    hash.update(name).update('\0').update(await readFile(join(sourceDir, name))).update('\0');
  }
  // A NUL-free marker no file name can equal (file names end in .go or are go.mod/go.sum).
  if (buildArgs.length > 0) hash.update('build-args').update('\0').update(buildArgs.join('\0')).update('\0');
  return hash.digest('hex').slice(0, 16);
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function checkGo(tool: GoTool, goCommand: string): Promise<void> {
  let version: string;
  try {
    const { stdout } = await execFileAsync(goCommand, ['env', 'GOVERSION']);
    version = stdout.trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw kpError('KP_ERR_CLUSTER_NO_GO', [
      tool.title,
      code === 'ENOENT' ? `${JSON.stringify(goCommand)} is not on PATH` : `${JSON.stringify(goCommand)} does not run`,
    ]);
  }
  const m = /^go(\d+)\.(\d+)/.exec(version);
  if (m) {
    const major = Number(m[1]);
    const minor = Number(m[2]);
    if (major < MIN_GO[0] || (major === MIN_GO[0] && minor < MIN_GO[1])) {
      throw kpError('KP_ERR_CLUSTER_NO_GO', [tool.title, `found ${version}, which is too old`]);
    }
  }
}

/**
 * Returns the path of `tool`'s program for the current sources, building it only when the
 * cache has none. A first build compiles much of Kubernetes (minutes on two cores); later
 * builds of changed sources reuse Go's own build cache and mostly just link, and the tools
 * share that cache with each other.
 *
 * The binary is written under a temporary name and renamed into place, so a crashed or
 * concurrent build never leaves a half-written program where another run would use it.
 */
export async function ensureGoTool(tool: GoTool, options: GoToolBuildOptions = {}): Promise<GoToolBinary> {
  const override = process.env[tool.binaryEnv];
  if (override !== undefined && override !== '') {
    if (!(await isExecutable(override))) {
      throw kpError('KP_ERR_CLUSTER_BUILD', [tool.title, override, `${tool.binaryEnv} does not name an executable file`]);
    }
    return { path: override, built: false, sourceHash: '' };
  }

  const cacheRoot = options.cacheRoot ?? defaultCacheRoot();
  // Extracted with the same names and contents as in a checkout, so the source hash, and with
  // it the cached program, is the same one a checkout or the npm package uses.
  const sourceDir =
    options.sourceDir ??
    (await extractEmbeddedTree(`tools/${tool.id}`, join(cacheRoot, 'sources'), tool.id)) ??
    defaultToolSourceDir(tool.id);
  if (!existsSync(join(sourceDir, 'go.mod'))) {
    throw kpError('KP_ERR_CLUSTER_BUILD', [
      tool.title,
      sourceDir,
      `no Go module there: the Go sources of tools/${tool.id} are missing (the npm package ships only the control plane's; the hollow kubelet needs a checkout), or set ${tool.binaryEnv} to a built ${tool.binaryName}`,
    ]);
  }
  const sourceHash = await goSourceHash(sourceDir, cacheKeyArgs(tool));
  const cacheDir = join(cacheRoot, `${tool.id}-${sourceHash}`);
  const binary = join(cacheDir, tool.binaryName);
  if (await isExecutable(binary)) return { path: binary, built: false, sourceHash };

  const goCommand = options.goCommand ?? 'go';
  await checkGo(tool, goCommand);
  await mkdir(cacheDir, { recursive: true });
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const temp = `${binary}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await runGoBuild(tool, goCommand, sourceDir, temp, progress, options.progressIntervalMs ?? 5000);
    await rename(temp, binary);
  } finally {
    await rm(temp, { force: true });
  }
  await pruneOtherBuilds(tool, dirname(cacheDir), basename(cacheDir));
  return { path: binary, built: true, sourceHash };
}

// Each build of older Go sources is 100-150 MB and is rarely used again once the sources
// changed, but two checkouts of different versions on one machine (a branch and main, or
// worktrees) each need theirs: pruning every other build made them rebuild in turn and delete
// each other's binary while it was in use. The newest few builds of each tool are kept.
const BUILDS_KEPT = 3;

async function pruneOtherBuilds(tool: GoTool, cacheRoot: string, keep: string): Promise<void> {
  const entries = await readdir(cacheRoot).catch(() => [] as string[]);
  const ours = new RegExp(`^${tool.id.replace(/[^\w]/g, '\\$&')}-[0-9a-f]{16}$`);
  const builds: { entry: string; mtimeMs: number }[] = [];
  for (const entry of entries) {
    if (!ours.test(entry) || entry === keep) continue;
    const info = await stat(join(cacheRoot, entry)).catch(() => undefined);
    if (info) builds.push({ entry, mtimeMs: info.mtimeMs });
  }
  builds.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { entry } of builds.slice(BUILDS_KEPT - 1)) await rm(join(cacheRoot, entry), { recursive: true, force: true });
}

function runGoBuild(
  tool: GoTool,
  goCommand: string,
  sourceDir: string,
  output: string,
  progress: (line: string) => void,
  intervalMs: number,
): Promise<void> {
  // -trimpath matches the flags of a manual build in tools/<id>, and every tool uses it, so
  // they all share Go's build cache: packages the control plane compiled are not compiled
  // again for the hollow kubelet.
  const args = ['build', '-trimpath', ...(tool.buildArgs ?? []), '-v', '-o', output, tool.buildPackage ?? '.'];
  const started = Date.now();
  const about = tool.approxPackages.toLocaleString('en-US');
  progress(
    `building ${tool.title} in ${sourceDir}; ` +
      `a first build compiles about ${about} packages (${tool.firstBuildEstimate}); later ones reuse the Go build cache`,
  );
  return new Promise((resolvePromise, reject) => {
    const child = spawn(goCommand, args, { cwd: sourceDir, stdio: ['ignore', 'ignore', 'pipe'] });
    const tail: string[] = [];
    let packages = 0;
    let lastReport = Date.now();
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (line) => {
      tail.push(line);
      if (tail.length > 30) tail.shift();
      // `go build -v` names each package it compiles (not those it finds in its cache), one
      // per line; compiler errors are indented or carry a file:line prefix.
      if (/^[\w.-]+(\/[\w.~+-]+)*$/.test(line)) packages += 1;
      const now = Date.now();
      if (now - lastReport >= intervalMs) {
        lastReport = now;
        progress(`building… ${packages} of about ${about} packages (${Math.round((now - started) / 1000)} s)`);
      }
    });
    child.on('error', (err) => reject(kpError('KP_ERR_CLUSTER_BUILD', [tool.title, sourceDir, err.message], { cause: err })));
    child.on('close', (code, signal) => {
      if (code === 0) {
        progress(`built ${tool.title} in ${Math.round((Date.now() - started) / 1000)} s (${packages} packages compiled)`);
        resolvePromise();
        return;
      }
      const why = signal !== null ? `go build was killed by ${signal}` : `go build exited with code ${code}`;
      reject(kpError('KP_ERR_CLUSTER_BUILD', [tool.title, sourceDir, `${why}:\n${tail.join('\n')}`]));
    });
  });
}
