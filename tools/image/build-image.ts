// `npm run build:image`: the container image of the Containerfile, built with buildah from
// scratch: no base image, only the single executable (`npm run build:exe`), the shared
// libraries `ldd` says it loads, and the files a non-root user needs. This file stages the
// build context (dist-image/context) and runs `buildah bud --storage-driver vfs`.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { EXE_NAME, EXE_OUT_DIR, PACKAGE_ROOT } from '../exe/build-exe.js';

const execFileAsync = promisify(execFile);

export const IMAGE_OUT_DIR = 'dist-image';
/** Where the executable sits in the image (also the entrypoint). */
export const IMAGE_EXE_PATH = `/usr/local/bin/${EXE_NAME}`;
/** The non-root user the image runs as by default (the "nonroot" id distroless images use). */
export const IMAGE_UID = 65532;
export const IMAGE_USER = 'kubelet-pods';

/** Global buildah options: vfs storage, and optionally a storage root of its own (for tests). */
export interface BuildahStorage {
  root?: string;
  runroot?: string;
}

export function buildahGlobalArgs(storage: BuildahStorage = {}): string[] {
  const args = ['--storage-driver', 'vfs'];
  if (storage.root !== undefined) args.push('--root', storage.root);
  if (storage.runroot !== undefined) args.push('--runroot', storage.runroot);
  return args;
}

/** Runs buildah; a missing buildah is reported with how to install it. */
export async function buildah(
  args: readonly string[],
  storage: BuildahStorage = {},
  options: { cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync('buildah', [...buildahGlobalArgs(storage), ...args], {
      cwd: options.cwd,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('buildah is not installed: `apt-get install -y buildah` (bash .ci/run installs it when missing)', {
        cause: err,
      });
    }
    const { stderr } = err as { stderr?: string };
    throw new Error(`buildah ${args.slice(0, 2).join(' ')} failed: ${stderr?.trim() ?? String(err)}`, { cause: err });
  }
}

/**
 * The shared libraries `exe` loads, by the absolute path `ldd` resolves each one to (the
 * dynamic loader included); empty for a static executable.
 */
export async function sharedLibraries(exe: string): Promise<string[]> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync('ldd', [exe]));
  } catch (err) {
    const out = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
    if (/not a dynamic executable/.test(out)) return [];
    throw new Error(`ldd ${exe} failed: ${out.trim() || String(err)}`, { cause: err });
  }
  const libraries: string[] = [];
  for (const line of stdout.split('\n')) {
    if (/not found/.test(line)) throw new Error(`ldd ${exe}: a shared library is missing: ${line.trim()}`);
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)";
    // the vDSO ("linux-vdso.so.1 (0x…)") is the kernel's and has no file.
    const m = /^\s*(?:\S+ => )?(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (m) libraries.push(m[1]!);
  }
  return libraries;
}

const PASSWD = `root:x:0:0:root:/root:/sbin/nologin\n${IMAGE_USER}:x:${IMAGE_UID}:${IMAGE_UID}:${IMAGE_USER}:/var/lib/${IMAGE_USER}:/sbin/nologin\n`;
const GROUP = `root:x:0:\n${IMAGE_USER}:x:${IMAGE_UID}:\n`;

export interface StagedContext {
  dir: string;
  libraries: string[];
  /** Bytes of every file in the image (the executable, the libraries, /etc). */
  bytes: number;
}

/** Writes the build context the Containerfile expects (see its header) into `dir`. */
export async function stageImageContext(exe: string, dir: string): Promise<StagedContext> {
  await rm(dir, { recursive: true, force: true });
  const rootfs = join(dir, 'rootfs');
  let bytes = 0;
  const put = async (source: string, target: string, mode: number): Promise<void> => {
    const path = join(rootfs, target);
    await mkdir(dirname(path), { recursive: true });
    await copyFile(source, path); // follows symlinks: the image gets the library itself
    await chmod(path, mode);
    bytes += (await stat(path)).size;
  };
  await put(exe, IMAGE_EXE_PATH, 0o755);
  const libraries = await sharedLibraries(exe);
  for (const library of libraries) await put(library, library, 0o755);
  await mkdir(join(rootfs, 'etc'), { recursive: true });
  await writeFile(join(rootfs, 'etc/passwd'), PASSWD);
  await writeFile(join(rootfs, 'etc/group'), GROUP);
  bytes += PASSWD.length + GROUP.length;
  await mkdir(join(rootfs, 'tmp'), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await mkdir(join(dir, 'home'), { recursive: true });
  return { dir, libraries, bytes };
}

export interface BuildImageOptions {
  /** The executable to package (default dist-exe/kubelet-pods). */
  exe?: string;
  /** Image names (default localhost/kubelet-pods:<version> and :latest). */
  tags?: readonly string[];
  /** The build context directory (default dist-image/context). */
  contextDir?: string;
  storage?: BuildahStorage;
  log?: (line: string) => void;
}

export interface BuiltImage {
  id: string;
  tags: readonly string[];
  /** The image's size as buildah reports it ("111 MB"). */
  size: string;
  /** Bytes of the files in its one layer. */
  bytes: number;
  libraries: string[];
  /** Wall time of the staging and `buildah bud`, in seconds. */
  seconds: number;
}

export async function buildImage(options: BuildImageOptions = {}): Promise<BuiltImage> {
  const started = Date.now();
  const exe = options.exe ?? join(PACKAGE_ROOT, EXE_OUT_DIR, EXE_NAME);
  await stat(exe).catch((err: unknown) => {
    throw new Error(`build:image: ${exe} is missing; run \`npm run build:exe\` first`, { cause: err });
  });
  const version = (JSON.parse(await readFile(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const tags = options.tags ?? [`localhost/kubelet-pods:${version}`, 'localhost/kubelet-pods:latest'];
  const context = await stageImageContext(exe, options.contextDir ?? join(PACKAGE_ROOT, IMAGE_OUT_DIR, 'context'));
  const storage = options.storage ?? {};
  await buildah(
    ['bud', '--quiet', '--layers=false', '-f', join(PACKAGE_ROOT, 'Containerfile'), ...tags.flatMap((t) => ['-t', t]), context.dir],
    storage,
  );
  const { stdout } = await buildah(['images', '--json', tags[0]!], storage);
  const [image] = JSON.parse(stdout) as { id: string; size: string }[];
  if (image === undefined) throw new Error(`build:image: buildah lists no image ${tags[0]} after building it`);
  const built: BuiltImage = {
    id: image.id,
    tags,
    size: image.size,
    bytes: context.bytes,
    libraries: context.libraries,
    seconds: (Date.now() - started) / 1000,
  };
  (options.log ?? ((line: string) => process.stderr.write(`${line}\n`)))(
    `built ${tags.join(', ')} (${image.id}) in ${built.seconds.toFixed(1)} s: ${image.size}, ` +
      `the executable and ${context.libraries.length} shared libraries`,
  );
  return built;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildImage().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
