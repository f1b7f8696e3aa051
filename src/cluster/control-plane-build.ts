import { spawn, execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { constants as fsConstants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { kpError } from '../errors.js';

const execFileAsync = promisify(execFile);

/** The file name of the built control-plane program inside its cache directory. */
export const CONTROL_PLANE_BINARY_NAME = 'kube-control-plane';

/**
 * Set this to the path of an already built kube-control-plane to skip the build (for
 * example in a CI image that ships one).
 */
export const CONTROL_PLANE_BINARY_ENV = 'KUBELET_PODS_CONTROL_PLANE';

/** The oldest Go that builds Kubernetes v1.34 (its go.mod says `go 1.24`). */
const MIN_GO: readonly [number, number] = [1, 24];

export interface ControlPlaneBuildOptions {
  /**
   * The Go module to build; defaults to tools/control-plane of this package, in a checkout or
   * an installed package alike (its Go sources ship in the package).
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

export interface ControlPlaneBinary {
  path: string;
  /** True when this call ran `go build`, false when the cache (or the env override) had it. */
  built: boolean;
  /** The source hash the cache directory is named after ('' for the env override). */
  sourceHash: string;
}

/** tools/control-plane relative to this file, from both src/ (ts) and an output dir such as build/src/ (js). */
export function defaultControlPlaneSourceDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const candidate = resolve(here, up, 'tools', 'control-plane');
    if (existsSync(join(candidate, 'go.mod'))) return candidate;
  }
  return resolve(here, '../..', 'tools', 'control-plane');
}

export function defaultCacheRoot(): string {
  const xdg = process.env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
  return join(base, 'kubelet-pods');
}

/**
 * Hash of everything that decides what the build produces: every *.go file plus go.mod and
 * go.sum, by name and content. The Go toolchain version is deliberately left out: any Go
 * >= 1.24 builds the same program, and rebuilding after a Go upgrade would cost about 11 min on 2 cores.
 */
export async function controlPlaneSourceHash(sourceDir: string): Promise<string> {
  const names = (await readdir(sourceDir))
    .filter((n) => n.endsWith('.go') || n === 'go.mod' || n === 'go.sum')
    .sort();
  const hash = createHash('sha256');
  for (const name of names) {
    hash.update(name).update('\0').update(await readFile(join(sourceDir, name))).update('\0');
  }
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

async function checkGo(goCommand: string): Promise<void> {
  let version: string;
  try {
    const { stdout } = await execFileAsync(goCommand, ['env', 'GOVERSION']);
    version = stdout.trim();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw kpError('KP_ERR_CLUSTER_NO_GO', [
      code === 'ENOENT' ? `${JSON.stringify(goCommand)} is not on PATH` : `${JSON.stringify(goCommand)} does not run`,
    ]);
  }
  const m = /^go(\d+)\.(\d+)/.exec(version);
  if (m) {
    const major = Number(m[1]);
    const minor = Number(m[2]);
    if (major < MIN_GO[0] || (major === MIN_GO[0] && minor < MIN_GO[1])) {
      throw kpError('KP_ERR_CLUSTER_NO_GO', [`found ${version}, which is too old`]);
    }
  }
}

/**
 * Returns the path of the kube-control-plane program for the current sources, building it
 * only when the cache has none. The first build compiles most of Kubernetes and etcd and
 * takes about 11 minutes on two cores (measured: 10 min 52 s); later builds of changed sources reuse Go's own build
 * cache and mostly just link.
 *
 * The binary is written under a temporary name and renamed into place, so a crashed or
 * concurrent build never leaves a half-written program where another run would use it.
 */
export async function ensureControlPlaneBinary(options: ControlPlaneBuildOptions = {}): Promise<ControlPlaneBinary> {
  const override = process.env[CONTROL_PLANE_BINARY_ENV];
  if (override !== undefined && override !== '') {
    if (!(await isExecutable(override))) {
      throw kpError('KP_ERR_CLUSTER_BUILD', [override, `${CONTROL_PLANE_BINARY_ENV} does not name an executable file`]);
    }
    return { path: override, built: false, sourceHash: '' };
  }

  const sourceDir = options.sourceDir ?? defaultControlPlaneSourceDir();
  if (!existsSync(join(sourceDir, 'go.mod'))) {
    throw kpError('KP_ERR_CLUSTER_BUILD', [
      sourceDir,
      `no Go module there: the control plane's Go sources (tools/control-plane of the kubelet-pods package) are missing; reinstall the package, or set ${CONTROL_PLANE_BINARY_ENV} to a built kube-control-plane`,
    ]);
  }
  const sourceHash = await controlPlaneSourceHash(sourceDir);
  const cacheDir = join(options.cacheRoot ?? defaultCacheRoot(), `control-plane-${sourceHash}`);
  const binary = join(cacheDir, CONTROL_PLANE_BINARY_NAME);
  if (await isExecutable(binary)) return { path: binary, built: false, sourceHash };

  const goCommand = options.goCommand ?? 'go';
  await checkGo(goCommand);
  await mkdir(cacheDir, { recursive: true });
  const progress = options.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const temp = `${binary}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await runGoBuild(goCommand, sourceDir, temp, progress, options.progressIntervalMs ?? 5000);
    await rename(temp, binary);
  } finally {
    await rm(temp, { force: true });
  }
  await pruneOtherBuilds(dirname(cacheDir), basename(cacheDir));
  return { path: binary, built: true, sourceHash };
}

// Each build of older Go sources is ~150 MB and will never be used again once the sources
// changed: keep only the newest.
async function pruneOtherBuilds(cacheRoot: string, keep: string): Promise<void> {
  const entries = await readdir(cacheRoot).catch(() => [] as string[]);
  for (const entry of entries) {
    if (entry.startsWith('control-plane-') && entry !== keep) await rm(join(cacheRoot, entry), { recursive: true, force: true });
  }
}

function runGoBuild(
  goCommand: string,
  sourceDir: string,
  output: string,
  progress: (line: string) => void,
  intervalMs: number,
): Promise<void> {
  // -trimpath matches the flags of a manual build in tools/control-plane, so both share
  // Go's build cache.
  const args = ['build', '-trimpath', '-v', '-o', output, '.'];
  const started = Date.now();
  progress(
    `building the local control plane (kube-apiserver + etcd) in ${sourceDir}; ` +
      'the first build compiles about 2,000 packages (about 11 minutes on 2 cores); later ones reuse the Go build cache',
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
      // `go build -v` names each package it compiles, one per line; compiler errors are
      // indented or carry a file:line prefix.
      if (/^[\w.-]+(\/[\w.~+-]+)*$/.test(line)) packages += 1;
      const now = Date.now();
      if (now - lastReport >= intervalMs) {
        lastReport = now;
        progress(`building… ${packages} of about 2,000 packages (${Math.round((now - started) / 1000)} s)`);
      }
    });
    child.on('error', (err) => reject(kpError('KP_ERR_CLUSTER_BUILD', [sourceDir, err.message], { cause: err })));
    child.on('close', (code, signal) => {
      if (code === 0) {
        progress(`built the local control plane in ${Math.round((Date.now() - started) / 1000)} s`);
        resolvePromise();
        return;
      }
      const why = signal !== null ? `go build was killed by ${signal}` : `go build exited with code ${code}`;
      reject(kpError('KP_ERR_CLUSTER_BUILD', [sourceDir, `${why}:\n${tail.join('\n')}`]));
    });
  });
}
