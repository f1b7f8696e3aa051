import { parseAllDocuments } from 'yaml';
import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { applySchemeDefaults } from './scheme-defaults.js';
import { isJsonObject, type JsonObject } from './json-object.js';
import { checkPodSchema, usesClusterTrustBundle, validateStaticPodCreate } from './validate.js';

/**
 * The three outcomes of decoding a manifest, as in the kubelet:
 * - `not-pod`: the bytes are not recognisably a pod (or a pod list): the caller may try
 *   another shape, and reports `reason`;
 * - `invalid`: they are a pod (list) but it is rejected: `error` says why;
 * - `ok`: a defaulted, validated pod (list).
 */
export type DecodeOutcome<T> =
  | { readonly kind: 'ok'; readonly value: T }
  | { readonly kind: 'invalid'; readonly error: KubeletPodsError }
  | { readonly kind: 'not-pod'; readonly reason: string };

/** Mutates a freshly decoded pod; the sources pass applyStaticPodDefaults here. */
export type DefaultFn = (pod: Pod) => void;


const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * YAML or JSON text → a plain value. JSON is tried first (duplicate keys: last wins); other
 * text is read as YAML 1.1 (yes/no/on/off booleans, like go-yaml v2), first document only,
 * duplicate keys allowed (last wins), timestamps left as strings.
 */
export function parseManifestText(data: Uint8Array | string): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = typeof data === 'string' ? data : utf8.decode(data);
  } catch {
    return { ok: false, reason: 'the data is not valid UTF-8' };
  }
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      // JSON-looking text that JSON.parse refuses may still be YAML flow syntax.
    }
  }
  try {
    const docs = parseAllDocuments(text, {
      version: '1.1',
      uniqueKeys: false,
      customTags: (tags) => tags.filter((t) => !(typeof t === 'object' && t.tag === 'tag:yaml.org,2002:timestamp')),
    });
    const first = Array.isArray(docs) ? docs[0] : undefined;
    if (!first) return { ok: true, value: null };
    if (first.errors.length > 0) return { ok: false, reason: `yaml: ${first.errors[0]!.message.split('\n')[0]}` };
    return { ok: true, value: first.toJS({ maxAliasCount: 1000 }) };
  } catch (err) {
    return { ok: false, reason: `yaml: ${(err as Error).message.split('\n')[0]}` };
  }
}

/** The universal decoder's type checks: object, kind, apiVersion, a kind known for v1. */
function checkTypeMeta(value: unknown, expectedKind: 'Pod' | 'PodList'): { ok: true; obj: JsonObject } | { ok: false; reason: string } {
  if (!isJsonObject(value)) {
    return { ok: false, reason: `expected a JSON or YAML object, got ${value === null ? 'nothing' : Array.isArray(value) ? 'a list' : typeof value}` };
  }
  const kind = typeof value.kind === 'string' ? value.kind : '';
  const apiVersion = typeof value.apiVersion === 'string' ? value.apiVersion : '';
  if (kind === '') return { ok: false, reason: "Object 'Kind' is missing" };
  if (apiVersion === '') return { ok: false, reason: "Object 'apiVersion' is missing" };
  if (apiVersion !== 'v1') return { ok: false, reason: `no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}` };
  if (kind !== expectedKind) {
    return { ok: false, reason: expectedKind === 'Pod' ? `invalid pod: ${kind}` : `invalid pods list: ${kind}` };
  }
  return { ok: true, obj: value };
}

function stripTypeMeta(obj: JsonObject): Pod {
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return rest as Pod;
}

const aggregate = (errors: readonly string[]): string => `[${[...new Set(errors)].join(', ')}]`;

/** Name check, defaulting, create-validation: the part shared by single pods and list items. */
function finishPod(pod: Pod, schemaErrors: readonly string[], defaultFn: DefaultFn): KubeletPodsError | undefined {
  if (!pod.metadata?.name) return kpError('KP_ERR_SOURCE_INVALID_POD', ['name is needed for the pod']);
  defaultFn(pod);
  const errors = [...schemaErrors, ...validateStaticPodCreate(pod)];
  if (errors.length > 0) return kpError('KP_ERR_SOURCE_INVALID_POD', [aggregate(errors)]);
  return undefined;
}

/**
 * Decodes one pod (the only shape a manifest file may have; the HTTP source's first try).
 * The result has no apiVersion/kind, carries the scheme defaults and whatever `defaultFn`
 * adds, and passed validation. Unknown fields are kept (the kubelet drops them).
 */
export function decodeSinglePod(data: Uint8Array | string, defaultFn: DefaultFn): DecodeOutcome<Pod> {
  const parsed = parseManifestText(data);
  if (!parsed.ok) return { kind: 'not-pod', reason: parsed.reason };
  const meta = checkTypeMeta(parsed.value, 'Pod');
  if (!meta.ok) return { kind: 'not-pod', reason: meta.reason };
  // Defaulting first, as the kubelet's decoder does: `imagePullPolicy: ""` is then a valid enum value.
  applySchemeDefaults(meta.obj as Pod);
  const schema = checkPodSchema(meta.obj);
  if (schema.typeErrors.length > 0) return { kind: 'not-pod', reason: aggregate(schema.typeErrors) };
  const pod = stripTypeMeta(meta.obj);
  const error = finishPod(pod, schema.otherErrors, defaultFn);
  if (error) return { kind: 'invalid', error };
  if (usesClusterTrustBundle(pod)) return { kind: 'invalid', error: kpError('KP_ERR_SOURCE_CLUSTER_TRUST_BUNDLE', []) };
  return { kind: 'ok', value: pod };
}

/**
 * Decodes a v1 PodList (HTTP source only). The first item that fails rejects the whole
 * list. As in the kubelet versions followed, the ClusterTrustBundle check is not applied
 * here (the API-reference rules of static-pod-rules.ts still are, by the source).
 */
export function decodePodList(data: Uint8Array | string, defaultFn: DefaultFn): DecodeOutcome<Pod[]> {
  const parsed = parseManifestText(data);
  if (!parsed.ok) return { kind: 'not-pod', reason: parsed.reason };
  const meta = checkTypeMeta(parsed.value, 'PodList');
  if (!meta.ok) return { kind: 'not-pod', reason: meta.reason };
  const rawItems = meta.obj.items ?? [];
  if (!Array.isArray(rawItems)) return { kind: 'not-pod', reason: 'items: must be a list' };
  const items: { pod: Pod; schemaErrors: string[] }[] = [];
  for (const [i, item] of rawItems.entries()) {
    if (!isJsonObject(item)) return { kind: 'not-pod', reason: `items[${i}]: must be an object` };
    applySchemeDefaults(item as Pod);
    const schema = checkPodSchema({ ...item, apiVersion: 'v1', kind: 'Pod' });
    if (schema.typeErrors.length > 0) {
      return { kind: 'not-pod', reason: aggregate(schema.typeErrors.map((e) => `items[${i}].${e}`)) };
    }
    const pod = stripTypeMeta(item);
    items.push({ pod, schemaErrors: schema.otherErrors });
  }
  for (const { pod, schemaErrors } of items) {
    const error = finishPod(pod, schemaErrors, defaultFn);
    if (error) return { kind: 'invalid', error };
  }
  return { kind: 'ok', value: items.map((i) => i.pod) };
}
