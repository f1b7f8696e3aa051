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
 * A pod's lines, all its containers' in the order written, as one flat list: the bytes of all
 * of them, then (container, time in ms, text) per line. A fleet pod's containers write a line
 * or two each and are rarely read, so no object, Date or list per container or line.
 */
type PodLines = Array<string | number>;
const HEADER = 1;
const STRIDE = 3;

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
  const pods = new Map<string, PodLines>();
  // A line's cost: its text and newline (UTF-8).
  const size = (text: string): number => Buffer.byteLength(text) + 1;
  return {
    append(uid, container, time, text) {
      // Lines written at once are one line each; a single line longer than the bound is cut.
      const lines = text.split('\n').map((raw) => intern(size(raw) > max ? Buffer.from(raw).subarray(0, max - 1).toString() : raw));
      const at = time.getTime();
      let kept = pods.get(uid);
      let added = 0;
      for (const line of lines) added += size(line);
      if (kept === undefined) {
        // Made to size: most pods write a line or two, and an array grown by push reserves
        // room for 17 more.
        kept = new Array<string | number>(HEADER + STRIDE * lines.length);
        kept[0] = added;
        lines.forEach((line, n) => {
          kept![HEADER + STRIDE * n] = container;
          kept![HEADER + STRIDE * n + 1] = at;
          kept![HEADER + STRIDE * n + 2] = line;
        });
        pods.set(uid, kept);
      } else {
        kept[0] = (kept[0] as number) + added;
        for (const line of lines) kept.push(container, at, line);
      }
      // No container can be over the bound while all of the pod's lines are within it.
      if ((kept[0] as number) > max) pods.set(uid, bounded(kept, container, max, size));
    },
    lines: (uid, container) => {
      const kept = pods.get(uid);
      if (kept === undefined) return undefined;
      const out: ContainerLogLine[] = [];
      for (let i = HEADER; i < kept.length; i += STRIDE) {
        if (kept[i] === container) out.push(Object.freeze({ time: new Date(kept[i + 1] as number), text: kept[i + 2] as string }));
      }
      return out.length > 0 ? out : undefined;
    },
    forget: (uid) => {
      pods.delete(uid);
    },
  };
}

/** `kept` without the oldest lines of `container` that take it over `max` bytes. */
function bounded(kept: PodLines, container: string, max: number, size: (text: string) => number): PodLines {
  let bytes = 0;
  for (let i = HEADER; i < kept.length; i += STRIDE) if (kept[i] === container) bytes += size(kept[i + 2] as string);
  if (bytes <= max) return kept;
  const out: PodLines = [0];
  let total = 0;
  for (let i = HEADER; i < kept.length; i += STRIDE) {
    const text = kept[i + 2] as string;
    if (kept[i] === container && bytes > max) {
      bytes -= size(text);
      continue;
    }
    out.push(kept[i]!, kept[i + 1]!, text);
    total += size(text);
  }
  out[0] = total;
  return out;
}
