import { CONFIG_HASH_ANNOTATION_KEY, NAMESPACE_DEFAULT } from '../constants.js';
import type { Pod } from '../pod/types.js';
import { isJsonObject, type JsonObject } from './json-object.js';
import { computeStaticPodUID } from './uid.js';

const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === '';

/**
 * The v1 API scheme defaults the kubelet's decoder applies to a manifest, and only those that
 * the sources' tests pin down. Adding any other default (hostNetwork:false, priority, probe
 * fields…) would change decoded pods and break whole-object comparisons. Mutates `pod`.
 * Tolerates malformed shapes (it runs before validation reports them).
 */
export function applySchemeDefaults(pod: Pod): void {
  const p = pod as JsonObject;
  if (p.spec === undefined || p.spec === null) p.spec = {};
  // A spec of the wrong type is left alone for the schema check to report.
  if (!isJsonObject(p.spec)) return;
  const spec = p.spec;
  if (isEmpty(spec.restartPolicy)) spec.restartPolicy = 'Always';
  if (isEmpty(spec.dnsPolicy)) spec.dnsPolicy = 'ClusterFirst';
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    spec.terminationGracePeriodSeconds = 30;
  }
  if (isEmpty(spec.schedulerName)) spec.schedulerName = 'default-scheduler';
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null) spec.enableServiceLinks = true;
  if (spec.securityContext === undefined || spec.securityContext === null) spec.securityContext = {};
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    for (const c of list) if (isJsonObject(c)) defaultContainer(c);
  }
}

function defaultContainer(c: JsonObject): void {
  if (isEmpty(c.terminationMessagePath)) c.terminationMessagePath = '/dev/termination-log';
  if (isEmpty(c.terminationMessagePolicy)) c.terminationMessagePolicy = 'File';
  if (isEmpty(c.imagePullPolicy)) c.imagePullPolicy = defaultPullPolicy(typeof c.image === 'string' ? c.image : '');
  if (Array.isArray(c.ports)) {
    for (const port of c.ports) if (isJsonObject(port) && isEmpty(port.protocol)) port.protocol = 'TCP';
  }
}

/**
 * `Always` for an image whose tag is `latest` or that has neither tag nor digest, else
 * `IfNotPresent` (a digest-only reference has no tag, so it is not "latest").
 */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  const at = image.indexOf('@');
  const hasDigest = at >= 0;
  const name = hasDigest ? image.slice(0, at) : image;
  const lastSegment = name.slice(name.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  const tag = colon >= 0 ? lastSegment.slice(colon + 1) : '';
  if (tag === 'latest') return 'Always';
  if (tag === '' && !hasDigest) return 'Always';
  return 'IfNotPresent';
}

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
