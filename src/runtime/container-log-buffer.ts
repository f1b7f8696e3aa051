import type { ContainerLogLine } from '../status/status-provider.js';

/**
 * What the (simulated) runtime keeps of each container's output: per pod UID and container
 * name, the lines in order, bounded per container by `maxBytesPerContainer` (the oldest lines
 * go first, as a runtime rotating its log files drops the oldest). Forgotten with the pod.
 */
export interface ContainerLogBuffer {
  append(uid: string, container: string, time: Date, text: string): void;
  /** The container's lines, oldest first; undefined when it has written none. */
  lines(uid: string, container: string): readonly ContainerLogLine[] | undefined;
  forget(uid: string): void;
}

/** 64 KiB per container unless told otherwise. */
export const DEFAULT_CONTAINER_LOG_BYTES = 64 * 1024;

/**
 * One container's lines, as times and texts side by side (no object or Date per line): a fleet
 * keeps a few lines for each of its many containers, and reads them rarely. Lines become
 * objects when read.
 */
interface Kept {
  readonly container: string;
  times: number[];
  texts: string[];
  bytes: number;
}

/**
 * One string per distinct line for all pods: a template's pods write the same lines ("started
 * container …"), each built anew, and a fleet holds thousands. Forgotten wholesale when full.
 */
const recentLines = new Map<string, string>();
const RECENT_LINES_MAX = 4096;

function intern(line: string): string {
  const held = recentLines.get(line);
  if (held !== undefined) return held;
  if (recentLines.size >= RECENT_LINES_MAX) recentLines.clear();
  recentLines.set(line, line);
  return line;
}

export function createContainerLogBuffer(options: { maxBytesPerContainer?: number } = {}): ContainerLogBuffer {
  const max = options.maxBytesPerContainer ?? DEFAULT_CONTAINER_LOG_BYTES;
  // Per pod its containers' lines; a pod has a few containers, so a list beats a Map.
  const pods = new Map<string, Kept[]>();
  // A line's cost: its text and newline (UTF-8).
  const size = (text: string): number => Buffer.byteLength(text) + 1;
  return {
    append(uid, container, time, text) {
      // Lines written at once are one line each; a single line longer than the bound is cut.
      const lines = text.split('\n').map((raw) => intern(size(raw) > max ? Buffer.from(raw).subarray(0, max - 1).toString() : raw));
      const at = time.getTime();
      const containers = pods.get(uid);
      let kept = containers?.find((k) => k.container === container);
      if (kept === undefined) {
        // Most containers write a line or two: arrays made to size, not grown by push from
        // empty (which reserves room for 17).
        kept = { container, times: lines.map(() => at), texts: lines, bytes: 0 };
        for (const line of lines) kept.bytes += size(line);
        if (containers === undefined) pods.set(uid, [kept]);
        else containers.push(kept);
      } else {
        for (const line of lines) {
          kept.times.push(at);
          kept.texts.push(line);
          kept.bytes += size(line);
        }
      }
      let drop = 0;
      while (kept.bytes > max && drop < kept.texts.length) kept.bytes -= size(kept.texts[drop++]!);
      if (drop > 0) {
        kept.times.splice(0, drop);
        kept.texts.splice(0, drop);
      }
    },
    lines: (uid, container) => {
      const kept = pods.get(uid)?.find((k) => k.container === container);
      return kept?.texts.map((text, i) => Object.freeze({ time: new Date(kept.times[i]!), text }));
    },
    forget: (uid) => {
      pods.delete(uid);
    },
  };
}
