// CPU and memory of the processes in a benchmark, per phase, from /proc: the subject, the control
// plane program (kube-apiserver and etcd share its process) and its two child processes
// (kube-scheduler, kube-controller-manager), and the harness itself, so a table can show who
// used the cores while the phase ran.
import { childProcesses, procCpuMs, procRss } from './subjects.js';

export interface WatchedProcess {
  name: string;
  pid: number;
}

/** The control plane's component processes: its children whose command line names their kubeconfig. */
export function controlPlaneProcesses(controlPlanePid: number): WatchedProcess[] {
  const found: WatchedProcess[] = [{ name: 'kube-apiserver + etcd', pid: controlPlanePid }];
  for (const { pid, argv } of childProcesses(controlPlanePid)) {
    const cmdline = argv.join(' ');
    if (cmdline.includes('controller-manager.kubeconfig')) found.push({ name: 'kube-controller-manager', pid });
    else if (cmdline.includes('scheduler.kubeconfig')) found.push({ name: 'kube-scheduler', pid });
  }
  return found;
}

export interface ProcessPhase {
  name: string;
  /** utime + stime over the phase, % of one core. */
  cpuPercent: number;
  /** VmRSS: the largest of the samples taken during the phase, and the last. */
  rssMaxBytes: number;
  rssEndBytes: number;
}

/**
 * Follows processes through one phase: CPU from its start to its end, RSS sampled every
 * `sampleMs` (a process that has exited keeps its last readings).
 */
export class PhaseUsage {
  readonly #procs: WatchedProcess[];
  readonly #cpu0: number[];
  readonly #rssMax: number[];
  readonly #rssEnd: number[];
  readonly #t0 = performance.now();
  readonly #timer: NodeJS.Timeout;

  constructor(procs: readonly WatchedProcess[], sampleMs = 1000) {
    this.#procs = [...procs, { name: 'benchmark harness', pid: process.pid }];
    this.#cpu0 = this.#procs.map((p) => safe(() => procCpuMs(p.pid)));
    this.#rssMax = this.#procs.map(() => 0);
    this.#rssEnd = this.#procs.map(() => 0);
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), sampleMs);
    this.#timer.unref();
  }

  #sample(): void {
    this.#procs.forEach((p, i) => {
      const rss = safe(() => procRss(p.pid).rss);
      if (rss === 0) return;
      this.#rssEnd[i] = rss;
      this.#rssMax[i] = Math.max(this.#rssMax[i]!, rss);
    });
  }

  end(): ProcessPhase[] {
    clearInterval(this.#timer);
    this.#sample();
    const wall = performance.now() - this.#t0;
    return this.#procs.map((p, i) => ({
      name: p.name,
      cpuPercent: Math.max(0, Math.round(((safe(() => procCpuMs(p.pid)) - this.#cpu0[i]!) / wall) * 10_000) / 100),
      rssMaxBytes: this.#rssMax[i]!,
      rssEndBytes: this.#rssEnd[i]!,
    }));
  }
}

function safe(read: () => number): number {
  try {
    return read();
  } catch {
    return 0;
  }
}
