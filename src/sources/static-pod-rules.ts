import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { isJsonObject, type JsonObject } from './json-object.js';

/** One reference from a static pod to an API object. */
export interface ApiReference {
  /** `secret`, `configmap`, `serviceaccount`, `persistentvolumeclaim`, `serviceaccount token`, `clustertrustbundle` */
  readonly resource: string;
  readonly name: string;
  /** Where in the pod, e.g. `spec.volumes[0].secret`. */
  readonly field: string;
}

const obj = (v: unknown): JsonObject | undefined => (isJsonObject(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Volume plugins whose credentials live in a Secret named by `<plugin>.<key>.name` (or `.secretName`). */
const SECRET_REF_PLUGINS: readonly (readonly [plugin: string, key: string])[] = [
  ['cephfs', 'secretRef'],
  ['cinder', 'secretRef'],
  ['flexVolume', 'secretRef'],
  ['iscsi', 'secretRef'],
  ['rbd', 'secretRef'],
  ['scaleIO', 'secretRef'],
  ['storageos', 'secretRef'],
  ['csi', 'nodePublishSecretRef'],
];

/**
 * Every API object a pod references: the things the API server refuses in a mirror pod
 * (NodeRestriction and ServiceAccount admission). A static pod with any of them would run
 * but never get a mirror, so kubelet-pods rejects it up front (the kubelet does the same
 * from v1.34 behind PreventStaticPodAPIReferences).
 */
export function findApiReferences(pod: Pod): ApiReference[] {
  const refs: ApiReference[] = [];
  const add = (resource: string, name: string, field: string): void => {
    refs.push({ resource, name, field });
  };
  const spec = obj(pod.spec) ?? {};
  const sa = str(spec.serviceAccountName) || str(spec.serviceAccount);
  if (sa) add('serviceaccount', sa, str(spec.serviceAccountName) ? 'spec.serviceAccountName' : 'spec.serviceAccount');
  arr(spec.imagePullSecrets).forEach((s, i) => add('secret', str(obj(s)?.name), `spec.imagePullSecrets[${i}]`));

  arr(spec.volumes).forEach((raw, i) => {
    const v = obj(raw) ?? {};
    const at = `spec.volumes[${i}]`;
    const secret = obj(v.secret);
    if (secret) add('secret', str(secret.secretName), `${at}.secret`);
    const configMap = obj(v.configMap);
    if (configMap) add('configmap', str(configMap.name), `${at}.configMap`);
    const pvc = obj(v.persistentVolumeClaim);
    if (pvc) add('persistentvolumeclaim', str(pvc.claimName), `${at}.persistentVolumeClaim`);
    if (obj(v.ephemeral)) add('persistentvolumeclaim', `${str(pod.metadata?.name)}-${str(v.name)}`, `${at}.ephemeral`);
    const azureFile = obj(v.azureFile);
    if (azureFile) add('secret', str(azureFile.secretName), `${at}.azureFile`);
    for (const [plugin, key] of SECRET_REF_PLUGINS) {
      const ref = obj(obj(v[plugin])?.[key]);
      if (ref) add('secret', str(ref.name), `${at}.${plugin}.${key}`);
    }
    arr(obj(v.projected)?.sources).forEach((rawSource, j) => {
      const s = obj(rawSource) ?? {};
      const sat = `${at}.projected.sources[${j}]`;
      const pSecret = obj(s.secret);
      if (pSecret) add('secret', str(pSecret.name), `${sat}.secret`);
      const pConfigMap = obj(s.configMap);
      if (pConfigMap) add('configmap', str(pConfigMap.name), `${sat}.configMap`);
      const token = obj(s.serviceAccountToken);
      if (token) add('serviceaccount token', str(token.path), `${sat}.serviceAccountToken`);
      const ctb = obj(s.clusterTrustBundle);
      if (ctb) add('clustertrustbundle', str(ctb.name) || str(ctb.signerName), `${sat}.clusterTrustBundle`);
    });
  });

  for (const kind of ['initContainers', 'containers', 'ephemeralContainers']) {
    arr(spec[kind]).forEach((rawC, i) => {
      const c = obj(rawC) ?? {};
      const at = `spec.${kind}[${i}]`;
      arr(c.env).forEach((rawEnv, k) => {
        const from = obj(obj(rawEnv)?.valueFrom);
        const secretKey = obj(from?.secretKeyRef);
        if (secretKey) add('secret', str(secretKey.name), `${at}.env[${k}].valueFrom.secretKeyRef`);
        const cmKey = obj(from?.configMapKeyRef);
        if (cmKey) add('configmap', str(cmKey.name), `${at}.env[${k}].valueFrom.configMapKeyRef`);
      });
      arr(c.envFrom).forEach((rawFrom, k) => {
        const from = obj(rawFrom) ?? {};
        const secretRef = obj(from.secretRef);
        if (secretRef) add('secret', str(secretRef.name), `${at}.envFrom[${k}].secretRef`);
        const cmRef = obj(from.configMapRef);
        if (cmRef) add('configmap', str(cmRef.name), `${at}.envFrom[${k}].configMapRef`);
      });
    });
  }
  return refs;
}

/**
 * The error for the first API reference of a static pod, or undefined when it has none.
 * `where` is the manifest path or URL, named in the message.
 */
export function checkStaticPodReferences(pod: Pod, where: string): KubeletPodsError | undefined {
  const [first] = findApiReferences(pod);
  if (!first) return undefined;
  return kpError('KP_ERR_SOURCE_API_REFERENCE', [where, first.resource, first.name, first.field]);
}
