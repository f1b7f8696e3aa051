import { createRequire } from 'node:module';
import { quote } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../values/dns-name.js';

/** One problem found in a manifest, in the API server's `field: reason` style. */
export type FieldError = string;

interface SchemaError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly message?: string;
  readonly params?: Record<string, unknown>;
}

export interface SchemaCheck {
  /** Values of the wrong JSON type: the kubelet's decoder would not even decode these. */
  readonly typeErrors: FieldError[];
  /** Everything else the schema rejects (missing required fields, formats…): validation errors. */
  readonly otherErrors: FieldError[];
}

/** `/spec/containers/0/name` → `spec.containers[0].name` */
function fieldPath(instancePath: string): string {
  let out = '';
  for (const part of instancePath.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(key) ? `[${key}]` : out === '' ? key : `.${key}`;
  }
  return out;
}

type PodModelClass = typeof import('kubernetes-models/v1/Pod').Pod;

const POD_MODEL = 'kubernetes-models/v1/Pod';
let podModel: PodModelClass | undefined;
let podModelLoad: Promise<void> | undefined;

/**
 * Loads the Pod schema validator (kubernetes-models with its schemas and ajv: the largest
 * module of the agent, most of the bundled command's main chunk) off the start path: the agent
 * awaits it before its sources start, so a restarted agent writes its Node status first
 * (docs/performance.md, "Restart → Node Ready, 2026-11-27"). Bundled, it is a chunk of its own.
 */
export function loadPodSchema(): Promise<void> {
  return (podModelLoad ??= import('kubernetes-models/v1/Pod').then((m) => {
    podModel ??= m.Pod;
  }));
}

/** True once the validator is loaded (by `loadPodSchema`, or by a first check). */
export function podSchemaLoaded(): boolean {
  return podModel !== undefined;
}

/**
 * The validator, loaded now when nobody awaited `loadPodSchema` first (a caller of the
 * synchronous decoding functions of `kubelet-pods/sources`): required from the package's
 * dependencies, as CommonJS.
 */
function podModelNow(): PodModelClass {
  return (podModel ??= (createRequire(import.meta.url)(POD_MODEL) as { Pod: PodModelClass }).Pod);
}

/**
 * Checks a raw manifest object against the Kubernetes v1 Pod OpenAPI schema, using the
 * kubernetes-models validator. The object must carry apiVersion and kind.
 */
export function checkPodSchema(raw: Record<string, unknown>): SchemaCheck {
  const typeErrors: FieldError[] = [];
  const otherErrors: FieldError[] = [];
  const PodModel = podModelNow();
  try {
    new PodModel(raw as ConstructorParameters<PodModelClass>[0]).validate();
  } catch (err) {
    const errors = (err as { errors?: SchemaError[] }).errors;
    if (!Array.isArray(errors)) throw err;
    for (const e of errors) {
      if (e.keyword === 'required') {
        const missing = String(e.params?.missingProperty ?? '');
        const base = fieldPath(e.instancePath);
        otherErrors.push(`${base ? `${base}.` : ''}${missing}: Required value`);
      } else if (e.keyword === 'type') {
        typeErrors.push(`${fieldPath(e.instancePath) || '<root>'}: ${e.message ?? 'wrong type'}`);
      } else {
        otherErrors.push(`${fieldPath(e.instancePath) || '<root>'}: ${e.message ?? e.keyword}`);
      }
    }
  }
  return { typeErrors, otherErrors };
}

/**
 * The create-validation rules the sources' tests need and a schema cannot express: names
 * (the already-suffixed pod name as a DNS-1123 subdomain, namespace, container and volume
 * names as DNS-1123 labels), duplicate container/volume names, container image required,
 * ephemeral containers forbidden on create, scheduling gates together with spec.nodeName.
 * Not the full API server validation.
 */
export function validateStaticPodCreate(pod: Pod): FieldError[] {
  const errors: FieldError[] = [];
  const name = pod.metadata?.name ?? '';
  if (name === '') errors.push('metadata.name: Required value');
  else if (!isDNS1123Subdomain(name)) {
    errors.push(`metadata.name: Invalid value: ${quote(name)}: must be a lowercase RFC 1123 subdomain of at most 253 characters`);
  }
  const namespace = pod.metadata?.namespace ?? '';
  // Empty only when no static defaults ran (they set `default`); the API server would default it too.
  if (namespace !== '' && !isDNS1123Label(namespace)) {
    errors.push(`metadata.namespace: Invalid value: ${quote(namespace)}: must be a lowercase RFC 1123 label`);
  }

  const spec = pod.spec;
  if (!spec) return [...errors, 'spec: Required value'];

  const volumeNames = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const field = `spec.volumes[${i}].name`;
    const vName = v?.name ?? '';
    if (vName === '') errors.push(`${field}: Required value`);
    else if (!isDNS1123Label(vName)) errors.push(`${field}: Invalid value: ${quote(vName)}: must be a lowercase RFC 1123 label`);
    else if (volumeNames.has(vName)) errors.push(`${field}: Duplicate value: ${quote(vName)}`);
    volumeNames.add(vName);
  });

  if (!spec.containers || spec.containers.length === 0) errors.push('spec.containers: Required value');
  const containerNames = new Set<string>();
  const checkContainers = (key: 'initContainers' | 'containers'): void => {
    (spec[key] ?? []).forEach((c, i) => {
      const field = `spec.${key}[${i}]`;
      const cName = c?.name ?? '';
      if (cName === '') errors.push(`${field}.name: Required value`);
      else if (!isDNS1123Label(cName)) errors.push(`${field}.name: Invalid value: ${quote(cName)}: must be a lowercase RFC 1123 label`);
      else if (containerNames.has(cName)) errors.push(`${field}.name: Duplicate value: ${quote(cName)}`);
      containerNames.add(cName);
      if (!c?.image) errors.push(`${field}.image: Required value`);
    });
  };
  checkContainers('initContainers');
  checkContainers('containers');

  if ((spec.ephemeralContainers ?? []).length > 0) {
    errors.push('spec.ephemeralContainers: Forbidden: cannot be set on create');
  }
  if ((spec.schedulingGates ?? []).length > 0 && spec.nodeName) {
    errors.push('spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared');
  }
  return errors;
}

/** True when a volume is projected with a clusterTrustBundle source. */
export function usesClusterTrustBundle(pod: Pod): boolean {
  return (pod.spec?.volumes ?? []).some((v) => (v.projected?.sources ?? []).some((s) => s.clusterTrustBundle != null));
}
