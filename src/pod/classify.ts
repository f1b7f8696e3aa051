import {
  ALL_SOURCE,
  API_SERVER_SOURCE,
  CONFIG_HASH_ANNOTATION_KEY,
  CONFIG_MIRROR_ANNOTATION_KEY,
  CONFIG_SOURCE_ANNOTATION_KEY,
  FILE_SOURCE,
  HTTP_SOURCE,
  type PodSourceName,
} from '../constants.js';
import { kpError } from '../errors.js';
import type { Pod } from './types.js';
import { podUID } from '../values/pod-format.js';

/**
 * The identity a static pod shares with its mirror: `<name>_<namespace>`. `_` is legal in
 * neither part, so the concatenation needs no escaping. Missing parts count as "".
 */
export function getPodFullName(pod: Pod): string {
  return buildPodFullName(pod.metadata?.name ?? '', pod.metadata?.namespace ?? '');
}

export function buildPodFullName(name: string, namespace: string): string {
  return `${name}_${namespace}`;
}

/** Splits a full name; anything but exactly two non-empty parts around one `_` throws. */
export function parsePodFullName(fullName: string): { name: string; namespace: string } {
  const parts = fullName.split('_');
  const [name, namespace] = parts;
  if (parts.length !== 2 || !name || !namespace) {
    throw kpError('KP_ERR_POD_FULL_NAME', [fullName]);
  }
  return { name, namespace };
}

/** Succeeded or Failed: the pod will not run again (the API's IsPodPhaseTerminal). */
export const isTerminalPhase = (phase: string | undefined): boolean => phase === 'Succeeded' || phase === 'Failed';

/** A mirror pod carries the mirror annotation, with any value, including "". */
export function isMirrorPod(pod: Pod): boolean {
  const annotations = pod.metadata?.annotations;
  return annotations !== undefined && annotations !== null && CONFIG_MIRROR_ANNOTATION_KEY in annotations;
}

/** The `config.source` annotation; throws when it is absent (an empty value is present). */
export function getPodSource(pod: Pod): string {
  const annotations = pod.metadata?.annotations;
  const source = annotations?.[CONFIG_SOURCE_ANNOTATION_KEY];
  if (source === undefined) throw kpError('KP_ERR_POD_SOURCE', [podUID(pod)]);
  return source;
}

/** Static means: a source annotation that is not `api` (so `""` counts as static). */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata?.annotations?.[CONFIG_SOURCE_ANNOTATION_KEY];
  return source !== undefined && source !== API_SERVER_SOURCE;
}

/**
 * True when `mirrorPod` reflects exactly this version of `pod`: same name and namespace, and
 * its mirror annotation equals the pod's hash (a pod without a hash compares as ""). An absent
 * (or null) name or namespace equals "", as in the kubelet, where a missing field decodes to
 * the empty string; the pod manager pairs such pods by full name too.
 */
export function isMirrorPodOf(mirrorPod: Pod, pod: Pod): boolean {
  if ((pod.metadata?.name ?? '') !== (mirrorPod.metadata?.name ?? '')) return false;
  if ((pod.metadata?.namespace ?? '') !== (mirrorPod.metadata?.namespace ?? '')) return false;
  const mirrorHash = mirrorPod.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY];
  if (mirrorHash === undefined) return false;
  return mirrorHash === (pod.metadata?.annotations?.[CONFIG_HASH_ANNOTATION_KEY] ?? '');
}

/**
 * Expands a list of source names: `*` anywhere means all three; `""` is skipped; duplicates
 * are kept in input order; an unknown name throws.
 */
export function getValidatedSources(sources: readonly string[]): PodSourceName[] {
  const validated: PodSourceName[] = [];
  for (const source of sources) {
    switch (source) {
      case ALL_SOURCE:
        return [FILE_SOURCE, HTTP_SOURCE, API_SERVER_SOURCE];
      case FILE_SOURCE:
      case HTTP_SOURCE:
      case API_SERVER_SOURCE:
        validated.push(source);
        break;
      case '':
        break;
      default:
        throw kpError('KP_ERR_SOURCE_UNKNOWN', [source]);
    }
  }
  return validated;
}

/** Static and mirror pods are always critical; others when their priority is system-critical. */
export function isCriticalPod(pod: Pod): boolean {
  if (isStaticPod(pod) || isMirrorPod(pod)) return true;
  const priority = pod.spec?.priority;
  return priority !== undefined && priority !== null && priority >= SYSTEM_CRITICAL_PRIORITY;
}

const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;
