import { goArch } from '../values/go-platform.js';
import type { NodeConditionType } from '../node/node-registration.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { nodeBehaviours, nodeConditionsAt } from '../scenario/select.js';
import type { Clock } from '../time/clock.js';

/**
 * Where the scenarios meet one node: the labels its selectors see, and the Node conditions its
 * windows turn bad, counted from the agent's start on the agent's clock.
 */

/** The labels the agent registers its Node with: the fleet template's, then the kubelet's own. */
export function ownNodeLabels(nodeName: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { ...extra, 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': goArch(process.arch) };
}

/** The node's bad conditions at a time, or undefined when no node scenario picks it. */
export function scenarioNodeConditions(
  scenarios: readonly Scenario[],
  nodeName: string,
  labels: Readonly<Record<string, string>>,
  clock: Clock,
): ((now: Date) => ReadonlySet<NodeConditionType>) | undefined {
  const behaviours = nodeBehaviours(scenarios, nodeName, (name) => (name === nodeName ? labels : undefined));
  if (behaviours.length === 0) return undefined;
  const startedAt = clock.now().getTime();
  return (now) => new Set([...nodeConditionsAt(behaviours, now.getTime() - startedAt)].map((c) => (c === 'NotReady' ? 'Ready' : c)));
}
