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

interface Kept {
  lines: ContainerLogLine[];
  bytes: number;
}

export function createContainerLogBuffer(options: { maxBytesPerContainer?: number } = {}): ContainerLogBuffer {
  const max = options.maxBytesPerContainer ?? DEFAULT_CONTAINER_LOG_BYTES;
  const pods = new Map<string, Map<string, Kept>>();
  // A line's cost: its text and newline (UTF-8).
  const size = (text: string): number => Buffer.byteLength(text) + 1;
  return {
    append(uid, container, time, text) {
      let containers = pods.get(uid);
      if (containers === undefined) pods.set(uid, (containers = new Map()));
      let kept = containers.get(container);
      if (kept === undefined) containers.set(container, (kept = { lines: [], bytes: 0 }));
      // Lines written at once are one line each; a single line longer than the bound is cut.
      for (const raw of text.split('\n')) {
        const line = size(raw) > max ? Buffer.from(raw).subarray(0, max - 1).toString() : raw;
        kept.lines.push(Object.freeze({ time, text: line }));
        kept.bytes += size(line);
      }
      let drop = 0;
      while (kept.bytes > max && drop < kept.lines.length) kept.bytes -= size(kept.lines[drop++]!.text);
      if (drop > 0) kept.lines.splice(0, drop);
    },
    lines: (uid, container) => pods.get(uid)?.get(container)?.lines.slice(),
    forget: (uid) => {
      pods.delete(uid);
    },
  };
}
