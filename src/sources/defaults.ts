import { CONFIG_HASH_ANNOTATION_KEY, NAMESPACE_DEFAULT } from '../constants.js';
import type { Pod } from '../pod/types.js';
import { computeStaticPodUID } from './uid.js';

/** Static pod name: the manifest name, `-`, the lower-cased node name. */
export function generatePodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

export interface StaticPodDefaultsOptions {
  /** The manifest path (file source) or URL (HTTP source). */
  readonly source: string;
  readonly isFile: boolean;
  readonly nodeName: string;
}

/**
 * The kubelet's applyDefaults, in its order: UID (kept when the manifest has one), suffixed
 * name, namespace `default`, spec.nodeName, `config.hash` = UID, the NoExecute toleration
 * (file pods only), phase Pending. Does NOT set config.source or config.seen: the merger
 * does. Mutates `pod`.
 */
export function applyStaticPodDefaults(pod: Pod, options: StaticPodDefaultsOptions): void {
  const { source, isFile, nodeName } = options;
  pod.metadata ??= {};
  const meta = pod.metadata;
  if (!meta.uid) {
    meta.uid = computeStaticPodUID(pod, isFile ? { file: source, nodeName } : { url: source });
  }
  meta.name = generatePodName(meta.name ?? '', nodeName);
  if (!meta.namespace) meta.namespace = NAMESPACE_DEFAULT;
  pod.spec ??= { containers: [] };
  pod.spec.nodeName = nodeName;
  meta.annotations ??= {};
  meta.annotations[CONFIG_HASH_ANNOTATION_KEY] = meta.uid;
  if (isFile) addOrUpdateNoExecuteToleration(pod);
  pod.status ??= {};
  pod.status.phase = 'Pending';
}

/**
 * Ensures the `{operator: Exists, effect: NoExecute}` toleration. Like the kubelet (whose
 * "already present" test never succeeds), every matching toleration is replaced by the bare
 * one, dropping e.g. its tolerationSeconds; with no match it is appended.
 */
function addOrUpdateNoExecuteToleration(pod: Pod): void {
  const spec = pod.spec!;
  const wanted = { operator: 'Exists', effect: 'NoExecute' };
  const list = spec.tolerations ?? [];
  let matched = false;
  const next = list.map((t) => {
    const same =
      (t.key ?? '') === '' && (t.value ?? '') === '' && t.operator === wanted.operator && t.effect === wanted.effect;
    if (!same) return t;
    matched = true;
    return { ...wanted };
  });
  if (!matched) next.push({ ...wanted });
  spec.tolerations = next;
}
