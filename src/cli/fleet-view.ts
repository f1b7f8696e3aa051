// The live view of `kubelet-pods demo --nodes N`: how far a fleet has converged (Nodes Ready,
// mirror pods created and Running, against the static pods the fleet holds; the demo's
// Deployment's pods placed and Running) and the fleet's own API request rate, redrawn on a
// terminal and as progress lines elsewhere, with what the scheduler sees of the nodes.

import { realClock, type Clock } from '../time/clock.js';
import { isDeploymentRunning } from './scheduling-view.js';

export interface FleetProgress {
  /** Nodes the fleet runs. */
  nodes: number;
  nodesReady: number;
  /** Static pods the fleet's nodes hold: one mirror pod each is expected. */
  expected: number;
  /** Mirror pods bound to the fleet's nodes in the API server. */
  mirrors: number;
  /** Of those, the ones whose phase is Running. */
  running: number;
  requestsPerSecond: number;
  elapsedMs: number;
  /** The demo's Deployment, if it runs one: its replicas, its pods bound to a node, and of those the Running ones. */
  deployment?: { desired: number; placed: number; running: number } | undefined;
}

export const isConverged = (p: FleetProgress): boolean =>
  p.nodesReady === p.nodes &&
  p.expected > 0 &&
  p.mirrors === p.expected &&
  p.running === p.expected &&
  (p.deployment === undefined || isDeploymentRunning(p.deployment));

/** One line: what a log or CI output shows while the fleet converges. */
export function progressLine(p: FleetProgress): string {
  return [
    `${(p.elapsedMs / 1000).toFixed(1)} s`,
    `nodes Ready ${p.nodesReady}/${p.nodes}`,
    `mirrors created ${p.mirrors}/${p.expected}`,
    `Running ${p.running}/${p.expected}`,
    ...(p.deployment ? [`deployment placed ${p.deployment.placed}/${p.deployment.desired}`, `Running ${p.deployment.running}/${p.deployment.desired}`] : []),
    `API ${p.requestsPerSecond.toFixed(1)} req/s`,
    ...(isConverged(p) ? ['converged'] : []),
  ].join(' · ');
}

const bar = (done: number, total: number, width = 30): string => {
  const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : 0;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
};

/** The terminal view: one bar per measure. */
export function renderFleetView(p: FleetProgress): string[] {
  const rows: Array<[string, number, number]> = [
    ['nodes Ready', p.nodesReady, p.nodes],
    ['mirrors created', p.mirrors, p.expected],
    ['mirrors Running', p.running, p.expected],
    ...(p.deployment
      ? ([
          ['deployment placed', p.deployment.placed, p.deployment.desired],
          ['deployment Running', p.deployment.running, p.deployment.desired],
        ] as Array<[string, number, number]>)
      : []),
  ];
  const width = Math.max(...rows.map(([, , total]) => String(total).length));
  const label = Math.max(16, ...rows.map(([l]) => l.length));
  return [
    ...rows.map(([name, done, total]) => `${name.padEnd(label)} ${bar(done, total)} ${String(done).padStart(width)}/${total}`),
    `${'API requests'.padEnd(label)} ${p.requestsPerSecond.toFixed(1)}/s (the fleet's, watches not included)`,
    `${'elapsed'.padEnd(label)} ${(p.elapsedMs / 1000).toFixed(1)} s${isConverged(p) ? ' · converged' : ''}`,
  ];
}

/** Requests per second over the last `windowMs`, from a running total read at each sample. */
export function createRateMeter(read: () => number, clock: Clock = realClock, windowMs = 5_000): { sample(): number } {
  const samples: Array<{ at: number; count: number }> = [];
  return {
    sample() {
      const now = clock.monotonic();
      samples.push({ at: now, count: read() });
      while (samples.length > 2 && now - samples[1]!.at >= windowMs) samples.shift();
      const first = samples[0]!;
      const last = samples[samples.length - 1]!;
      return last.at > first.at ? ((last.count - first.count) / (last.at - first.at)) * 1000 : 0;
    },
  };
}

/** Without a change, a progress line at least this often (the request rate moves on). */
export const PROGRESS_LINE_EVERY_MS = 10_000;

/**
 * Draws the progress every `refreshMs`. A terminal gets the header and the view redrawn in
 * place, `details` below it; anything else (a log, CI) gets the header once and a progress
 * line when a count changes, and at least every 10 s so the request rate stays visible, and
 * `details` (what the scheduler sees) after the line that says converged and, if they or the
 * progress line changed since, after the last line. `converged` resolves (after its lines were written) the first
 * time every node is Ready, every mirror Running and every pod of the Deployment Running.
 */
export function startFleetLiveView(o: {
  header: readonly string[];
  progress: () => FleetProgress;
  /** Lines drawn below the progress (scheduling-view.ts). */
  details?: () => readonly string[];
  out: Pick<NodeJS.WriteStream, 'write' | 'isTTY'>;
  refreshMs: number;
  clock?: Clock;
}): {
  converged: Promise<void>;
  stop(): void;
} {
  const { out } = o;
  const clock = o.clock ?? realClock;
  let lastCounts = '';
  let lastLineAt = -Infinity;
  let lastLine = '';
  let lastDetails = '';
  let wasConverged = false;
  let onConverged: () => void = () => undefined;
  const converged = new Promise<void>((resolve) => (onConverged = resolve));
  if (!out.isTTY) out.write(`${o.header.join('\n')}\n`);
  const draw = (final: boolean): void => {
    const p = o.progress();
    const converged = isConverged(p);
    if (out.isTTY) {
      const details = o.details?.() ?? [];
      out.write(`\x1b[H\x1b[2J${[...o.header, '', ...renderFleetView(p), ...(details.length > 0 ? ['', ...details] : [])].join('\n')}\n`);
    } else {
      const d = p.deployment;
      const counts = `${p.nodesReady} ${p.mirrors} ${p.running} ${p.expected}${d ? ` ${d.placed} ${d.running} ${d.desired}` : ''}`;
      const now = clock.monotonic();
      const line = progressLine(p);
      let wroteLine = false;
      if ((final && line !== lastLine) || counts !== lastCounts || now - lastLineAt >= PROGRESS_LINE_EVERY_MS) {
        out.write(`${line}\n`);
        wroteLine = true;
        lastCounts = counts;
        lastLineAt = now;
        lastLine = line;
      }
      if (o.details !== undefined && ((converged && !wasConverged) || final)) {
        const details = o.details().join('\n');
        // The output ends with what the scheduler sees: again after a last line written below it.
        if (details !== '' && (details !== lastDetails || (final && wroteLine))) out.write(`${details}\n`);
        lastDetails = details;
      }
    }
    wasConverged = converged;
    if (converged) onConverged();
  };
  draw(false);
  const timer = clock.setInterval(() => draw(false), o.refreshMs);
  return {
    converged,
    stop: () => {
      clock.clearInterval(timer);
      draw(true); // the last state, so a script's output ends with what the fleet left behind
    },
  };
}
