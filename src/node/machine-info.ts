import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import { arch as osArch, cpus, release, totalmem } from 'node:os';
import { goArch } from '../values/go-platform.js';

/**
 * What this machine can tell about itself, for the Node's capacity and `nodeInfo`, as the
 * kubelet learns it from cAdvisor and the host's files. Whatever cannot be read (no permission,
 * a container without /sys) is empty, as the kubelet leaves it.
 */
export interface MachineInfo {
  /** Logical CPUs. */
  readonly cpus: number;
  /** Total memory, in bytes. */
  readonly memoryBytes: number;
  /** Size of the root filesystem, in bytes (the kubelet measures its root directory's). */
  readonly ephemeralStorageBytes: number;
  /** Huge page size in bytes → bytes reserved in pages of that size. */
  readonly hugePages: ReadonlyMap<number, number>;
  readonly kernelVersion: string;
  /** `PRETTY_NAME` of /etc/os-release. */
  readonly osImage: string;
  /** GOARCH spelling, as labels and `nodeInfo.architecture` use. */
  readonly architecture: string;
  readonly machineID: string;
  readonly systemUUID: string;
  readonly bootID: string;
}

export interface MachineFiles {
  /** Reads a text file; throws when it cannot. */
  readText(path: string): string;
  /** Lists a directory; throws when it cannot. */
  list(path: string): string[];
  /** Bytes of the filesystem holding `path`; throws when it cannot. */
  filesystemBytes(path: string): number;
}

const realFiles: MachineFiles = {
  readText: (path) => readFileSync(path, 'utf8'),
  list: (path) => readdirSync(path),
  filesystemBytes: (path) => {
    const s = statfsSync(path);
    return s.blocks * s.bsize;
  },
};

/** Reads the machine once (a handful of small files); for the agent's start. */
export function readMachineInfo(files: MachineFiles = realFiles): MachineInfo {
  const text = (path: string): string => {
    try {
      return files.readText(path).trim();
    } catch {
      return '';
    }
  };
  let ephemeralStorageBytes = 0;
  try {
    ephemeralStorageBytes = files.filesystemBytes('/');
  } catch {
    // Unknown: reported as 0, as the kubelet does without filesystem stats.
  }
  return {
    cpus: Math.max(1, cpus().length),
    memoryBytes: totalmem(),
    ephemeralStorageBytes,
    hugePages: readHugePages(files),
    kernelVersion: release(),
    osImage: prettyName(text('/etc/os-release')) || 'Linux',
    architecture: goArch(osArch()),
    machineID: text('/etc/machine-id'),
    // Readable by root only on most systems; the kubelet leaves it empty too when it cannot read it.
    systemUUID: text('/sys/class/dmi/id/product_uuid'),
    bootID: text('/proc/sys/kernel/random/boot_id'),
  };
}

function prettyName(osRelease: string): string {
  const line = osRelease.split('\n').find((l) => l.startsWith('PRETTY_NAME='));
  if (line === undefined) return '';
  return line.slice('PRETTY_NAME='.length).trim().replace(/^"(.*)"$/, '$1');
}

// Each supported page size is a directory hugepages-<size>kB; the kubelet reports every size,
// with 0 bytes when no pages of it are reserved.
function readHugePages(files: MachineFiles): Map<number, number> {
  const out = new Map<number, number>();
  const dir = '/sys/kernel/mm/hugepages';
  let entries: string[];
  try {
    entries = files.list(dir);
  } catch {
    return out;
  }
  for (const entry of entries) {
    const m = /^hugepages-(\d+)kB$/.exec(entry);
    if (!m) continue;
    const size = Number(m[1]) * 1024;
    let pages = 0;
    try {
      pages = Number(files.readText(`${dir}/${entry}/nr_hugepages`).trim()) || 0;
    } catch {
      // A size whose count cannot be read still exists, with no pages.
    }
    out.set(size, pages * size);
  }
  return out;
}

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * A byte count as the API server writes a binary quantity back: the largest power-of-1024
 * suffix that divides it exactly, so that what we send is what we read back and a status
 * comparison does not see a change that is only spelling.
 */
export function binaryQuantity(bytes: number): string {
  let value = Math.max(0, Math.floor(bytes));
  let i = 0;
  while (value !== 0 && value % 1024 === 0 && i < BINARY_SUFFIXES.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value}${BINARY_SUFFIXES[i]}`;
}

/** The resource name of a huge page size (`hugepages-2Mi`, `hugepages-1Gi`). */
export function hugePageResource(sizeBytes: number): string {
  return `hugepages-${binaryQuantity(sizeBytes)}`;
}
