import { createHash } from 'node:crypto';
import type { Pod } from '../pod/types.js';
import type { NodeConditionBehaviour, PodBehaviour, Scenario, ScenarioMatch } from './scenario-types.js';

/**
 * Which pods and nodes a scenario picks: its selector, then its fraction, drawn once per pod
 * UID (or node name) and scenario name by a hash, so that the same pods are picked in every run
 * and by every replica, and a scenario's picks do not follow another's.
 */

/** Labels of a node, by its name; undefined for a node whose labels are unknown. */
export type NodeLabelsOf = (nodeName: string) => Readonly<Record<string, string>> | undefined;

/** Whether `text` matches `pattern`, where `*` stands for any run of characters (none too). */
export function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!text.startsWith(first) || text.length < first.length + last.length || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/**
 * A number in [0, 1) fixed by the scenario's name and the pod UID (or node name): a pod is
 * picked when it is below the fraction, so fraction 0.05 picks about 5 % of many pods.
 */
export function scenarioDraw(scenarioName: string, subject: string): number {
  return createHash('sha256').update(scenarioName).update('\0').update(subject).digest().readUInt32BE(0) / 2 ** 32;
}

function picked(scenario: Scenario, subject: string): boolean {
  if (scenario.fraction >= 1) return true;
  return scenarioDraw(scenario.name, subject) < scenario.fraction;
}

function labelsMatch(want: Readonly<Record<string, string>> | undefined, have: Readonly<Record<string, string>> | undefined): boolean {
  if (want === undefined) return true;
  return Object.entries(want).every(([k, v]) => have?.[k] === v);
}

function nodeMatches(match: ScenarioMatch, nodeName: string, nodeLabels: NodeLabelsOf): boolean {
  if (match.nodes !== undefined && !match.nodes.some((p) => globMatch(p, nodeName))) return false;
  return match.nodeLabels === undefined || labelsMatch(match.nodeLabels, nodeLabels(nodeName));
}

function ownerMatches(owner: NonNullable<ScenarioMatch['owner']>, pod: Pod): boolean {
  const refs = pod.metadata?.ownerReferences ?? [];
  if (refs.some((r) => r.kind === owner.kind && globMatch(owner.name, r.name))) return true;
  if (owner.kind !== 'Deployment') return false;
  // A Deployment owns its pods through ReplicaSets named `<deployment>-<pod-template-hash>`.
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  if (hash === undefined) return false;
  return refs.some((r) => r.kind === 'ReplicaSet' && r.name.endsWith(`-${hash}`) && globMatch(owner.name, r.name.slice(0, -hash.length - 1)));
}

/** The images of the pod's regular containers. */
export function podImages(pod: Pod): string[] {
  return (pod.spec?.containers ?? []).map((c) => c.image ?? '');
}

/** Whether the pod is one the scenario's selector picks (its fraction aside). */
export function podMatches(match: ScenarioMatch, pod: Pod, nodeLabels: NodeLabelsOf): boolean {
  const namespace = pod.metadata?.namespace ?? 'default';
  if (match.namespaces !== undefined && !match.namespaces.some((p) => globMatch(p, namespace))) return false;
  if (!labelsMatch(match.labels, pod.metadata?.labels)) return false;
  if (match.owner !== undefined && !ownerMatches(match.owner, pod)) return false;
  if (match.image !== undefined && !podImages(pod).some((image) => globMatch(match.image!, image))) return false;
  if (match.nodes !== undefined || match.nodeLabels !== undefined) return nodeMatches(match, pod.spec?.nodeName ?? '', nodeLabels);
  return true;
}

/** A pod behaviour that picked a pod, with the selector's image pattern (it narrows the containers). */
export interface PickedBehaviour {
  readonly scenario: string;
  readonly behaviour: PodBehaviour;
  readonly image: string | undefined;
}

/** The pod behaviours of the scenarios that pick this pod, in the scenarios' order. */
export function podBehaviours(scenarios: readonly Scenario[], pod: Pod, nodeLabels: NodeLabelsOf): PickedBehaviour[] {
  const uid = pod.metadata?.uid ?? '';
  const out: PickedBehaviour[] = [];
  for (const s of scenarios) {
    if (s.behaviour.kind === 'nodeCondition') continue;
    if (!podMatches(s.match, pod, nodeLabels) || !picked(s, uid)) continue;
    out.push({ scenario: s.name, behaviour: s.behaviour, image: s.match.image });
  }
  return out;
}

/** The node behaviours of the scenarios that pick this node, in the scenarios' order. */
export function nodeBehaviours(scenarios: readonly Scenario[], nodeName: string, nodeLabels: NodeLabelsOf): NodeConditionBehaviour[] {
  return scenarios.flatMap((s) => (s.behaviour.kind === 'nodeCondition' && nodeMatches(s.match, nodeName, nodeLabels) && picked(s, nodeName) ? [s.behaviour] : []));
}

/** Whether a behaviour that names containers (and an image pattern) concerns this container. */
export function concernsContainer(picked: PickedBehaviour, name: string, image: string): boolean {
  const container = 'container' in picked.behaviour ? picked.behaviour.container : undefined;
  if (container !== undefined && !globMatch(container, name)) return false;
  return picked.image === undefined || globMatch(picked.image, image);
}

/** The conditions gone bad `elapsedMs` after the node's start: those whose window holds that time. */
export function nodeConditionsAt(behaviours: readonly NodeConditionBehaviour[], elapsedMs: number): Set<NodeConditionBehaviour['condition']> {
  const out = new Set<NodeConditionBehaviour['condition']>();
  for (const b of behaviours) if (elapsedMs >= b.fromMs && (b.untilMs === undefined || elapsedMs < b.untilMs)) out.add(b.condition);
  return out;
}
