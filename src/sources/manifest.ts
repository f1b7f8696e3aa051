import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { decodePodList, decodeSinglePod } from './decode.js';
import { applyStaticPodDefaults } from './defaults.js';
import { checkStaticPodReferences } from './static-pod-rules.js';

/**
 * Where manifest bytes come from. It decides the accepted shapes (a file holds one pod, a URL
 * one pod or a PodList), salts the UID, adds the NoExecute toleration for files only, and is
 * named in every error.
 */
export type ManifestOrigin = { readonly file: string } | { readonly url: string };

/** The static pods of one manifest, or the one reason none of them is taken. */
export type ManifestResult = { readonly pods: Pod[] } | { readonly error: KubeletPodsError };

/**
 * The one decode path of the file and HTTP sources (the kubelet's common.go role): decode
 * (YAML or JSON, type checks, scheme defaults, validation), the static defaults of this
 * origin, then the API-reference rules. A URL's body is tried as a single pod, then as a
 * PodList; when both fail, the error gives both reasons. One invalid list item rejects the
 * whole list, as in the kubelet.
 */
export function parseManifest(data: Uint8Array | string, origin: ManifestOrigin, nodeName: string): ManifestResult {
  const where = 'file' in origin ? origin.file : origin.url;
  const defaults = (pod: Pod): void => applyStaticPodDefaults(pod, { source: where, isFile: 'file' in origin, nodeName });
  let pods: Pod[];
  const single = decodeSinglePod(data, defaults);
  if (single.kind === 'ok') pods = [single.value];
  else if (single.kind === 'invalid') return { error: single.error };
  else if ('file' in origin) return { error: kpError('KP_ERR_SOURCE_DECODE', [where, single.reason]) };
  else {
    const list = decodePodList(data, defaults);
    if (list.kind === 'invalid') return { error: list.error };
    if (list.kind === 'not-pod') return { error: kpError('KP_ERR_SOURCE_HTTP_PARSE', [where, single.reason, list.reason]) };
    pods = list.value;
  }
  for (const pod of pods) {
    const refError = checkStaticPodReferences(pod, where);
    if (refError) return { error: refError };
  }
  return { pods };
}

/** One manifest file → its static pod (never a list), or the reason it is refused. */
export function parseManifestFile(
  data: Uint8Array | string,
  path: string,
  nodeName: string,
): { readonly pod: Pod } | { readonly error: KubeletPodsError } {
  const result = parseManifest(data, { file: path }, nodeName);
  return 'error' in result ? result : { pod: result.pods[0]! };
}

/** An HTTP body → its static pods (one pod or a PodList), or the reason they are refused. */
export function parseHttpBody(body: Uint8Array | string, url: string, nodeName: string): ManifestResult {
  return parseManifest(body, { url }, nodeName);
}
