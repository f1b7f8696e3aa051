import type { Pod } from '../pod/types.js';

/**
 * Per-pod simulation settings, read from the static pod's (or pod's) annotations. They are how
 * a manifest, a test or a demo asks the simulated runtime for a behaviour a real container would
 * have (a slow stop, a crash), since there is no container to misbehave.
 */
export const SIMULATION_ANNOTATIONS = Object.freeze({
  /** Seconds each container takes to exit after SIGTERM (a decimal number). */
  stopSeconds: 'simulation.kubelet-pods.io/stop-seconds',
  /**
   * Containers that exit by themselves: `<container>=<exit code>@<seconds after each start>`,
   * comma-separated, e.g. `main=1@5,side=0@30`.
   */
  exit: 'simulation.kubelet-pods.io/exit',
});

/** One container's planned exit: its code, and how long after each start. */
export interface PlannedExit {
  exitCode: number;
  afterMs: number;
  /** The reason the runtime gives (`OOMKilled` from a scenario); by the exit code otherwise. */
  reason?: string;
}

/** The stop time of a pod's containers: its annotation, else the provider's. */
export function stopMsOf(pod: Pod, fallbackMs: number): number {
  const raw = pod.metadata?.annotations?.[SIMULATION_ANNOTATIONS.stopSeconds];
  const seconds = raw === undefined ? NaN : Number(raw);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : fallbackMs;
}

/** The pod's planned container exits, from its annotation; malformed entries are ignored. */
export function exitPlan(pod: Pod): Map<string, PlannedExit> {
  const plan = new Map<string, PlannedExit>();
  const raw = pod.metadata?.annotations?.[SIMULATION_ANNOTATIONS.exit];
  for (const item of raw?.split(',') ?? []) {
    const m = /^\s*([^=\s]+)=(\d+)@(\d+(?:\.\d+)?)\s*$/.exec(item);
    if (m !== null) plan.set(m[1]!, { exitCode: Number(m[2]), afterMs: Number(m[3]) * 1000 });
  }
  return plan;
}
