import type { Pod } from '../pod/types.js';
import { DEFAULT_PULL_ERROR } from '../scenario/parse-scenarios.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { concernsContainer, podBehaviours, type NodeLabelsOf } from '../scenario/select.js';
import { exitPlan, type PlannedExit } from './simulation-annotations.js';

/**
 * What the configured scenarios (src/scenario/) ask of one pod, worked out once when the
 * runtime first sees it: per regular container a planned exit (an exit code, or the OOM
 * killer's 137), a failing image pull, a failing or flapping readiness; for the pod a later
 * start and a stop that ignores SIGTERM. For each kind the first scenario in the list that
 * picks the pod wins; the pod's own annotations (simulation-annotations.ts) win over all of
 * them.
 */
export interface PodPlan {
  /** Added to the pod's start delay. */
  readonly startDelayMs: number;
  /** Regular containers' exits the annotations do not plan. */
  readonly exits: ReadonlyMap<string, PlannedExit>;
  /** Containers whose image never pulls, with the runtime's error text. */
  readonly pullFailures: ReadonlyMap<string, string>;
  /** Containers whose readiness probe fails, and how: for good, or flapping every `periodMs`. */
  readonly readiness: ReadonlyMap<string, { readonly periodMs: number | undefined; readonly message: string }>;
  /** Every container ignores SIGTERM (unless the pod's stop-seconds annotation says otherwise). */
  readonly slowStop: boolean;
}

/** The exit code and reason of a container the OOM killer ends (SIGKILL). */
export const OOM_KILLED = Object.freeze({ exitCode: 137, reason: 'OOMKilled' });

/** The pod's plan, or undefined when no scenario picks it. */
export function podPlan(scenarios: readonly Scenario[], pod: Pod, nodeLabels: NodeLabelsOf): PodPlan | undefined {
  if (scenarios.length === 0) return undefined;
  const picked = podBehaviours(scenarios, pod, nodeLabels);
  if (picked.length === 0) return undefined;
  const annotated = exitPlan(pod);
  let startDelayMs = 0;
  let startDelaySet = false;
  let slowStop = false;
  const exits = new Map<string, PlannedExit>();
  const pullFailures = new Map<string, string>();
  const readiness = new Map<string, { periodMs: number | undefined; message: string }>();
  for (const p of picked) {
    const b = p.behaviour;
    if (b.kind === 'startDelay') {
      if (!startDelaySet) startDelayMs = b.delayMs;
      startDelaySet = true;
      continue;
    }
    if (b.kind === 'slowStop') {
      slowStop = true;
      continue;
    }
    for (const c of pod.spec?.containers ?? []) {
      if (!concernsContainer(p, c.name, c.image ?? '')) continue;
      if (b.kind === 'exit' || b.kind === 'oomKill') {
        if (annotated.has(c.name) || exits.has(c.name)) continue;
        exits.set(c.name, b.kind === 'exit' ? { exitCode: b.exitCode, afterMs: b.afterMs } : { ...OOM_KILLED, afterMs: b.afterMs });
      } else if (b.kind === 'imagePullFailure') {
        if (!pullFailures.has(c.name)) pullFailures.set(c.name, b.message !== '' ? b.message : DEFAULT_PULL_ERROR(c.image ?? ''));
      } else if (!readiness.has(c.name)) {
        readiness.set(c.name, { periodMs: b.periodMs, message: b.message });
      }
    }
  }
  return { startDelayMs, exits, pullFailures, readiness, slowStop };
}

/** The pod's planned exits: its annotation's, then the scenarios' for the containers it leaves out. */
export function plannedExits(pod: Pod, plan: PodPlan | undefined): Map<string, PlannedExit> {
  const exits = exitPlan(pod);
  for (const [name, exit] of plan?.exits ?? []) if (!exits.has(name)) exits.set(name, exit);
  return exits;
}
