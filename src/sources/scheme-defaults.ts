import type { Pod } from '../pod/types.js';
import { isJsonObject, type JsonObject } from './json-object.js';
import { defaultPodLevelResources, defaultResourceList } from './resource-defaults.js';

/**
 * The v1 Pod defaulting the kubelet's decoder applies to a manifest (k8s.io/kubernetes
 * pkg/apis/core/v1: the generated SetObjectDefaults_Pod and the SetDefaults_* functions it
 * calls), walked in the same order. Runs before the UID is computed, so that writing a default
 * out in a manifest does not change the pod's UID. Mutates `pod`; tolerates malformed shapes,
 * since it runs before validation reports them.
 *
 * Fields Go writes even when empty (a container's `resources: {}`, a resourceFieldRef's
 * `divisor: "0"`) and empty values Go's decoding drops (`value: ""`, `add: []`) are not
 * imitated: ours keeps what the file says (docs/kubelet-differences.md, KD-158 to KD-161).
 */
export function applySchemeDefaults(pod: Pod): void {
  const p = pod as JsonObject;
  if (p.spec === undefined || p.spec === null) p.spec = {};
  // A spec of the wrong type is left alone for the schema check to report.
  if (!isJsonObject(p.spec)) return;
  const spec = p.spec;
  defaultPod(spec);
  defaultPodSpec(spec);
  for (const volume of objects(spec.volumes)) defaultVolume(volume);
  for (const key of CONTAINER_LISTS) for (const c of objects(spec[key])) defaultContainer(c);
  defaultResourceList(spec, 'overhead');
  if (isJsonObject(spec.resources)) defaultRequirements(spec.resources);
  if (isJsonObject(p.status)) {
    for (const key of ['initContainerStatuses', 'containerStatuses', 'ephemeralContainerStatuses']) {
      for (const s of objects(p.status[key])) {
        defaultResourceList(s, 'allocatedResources');
        if (isJsonObject(s.resources)) defaultRequirements(s.resources);
      }
    }
  }
}

/**
 * The Go defaulters this module carries out, by the name SetObjectDefaults_Pod calls them or,
 * for a default the generator writes inline, by the Go field it sets. A test reads
 * SetObjectDefaults_Pod from the Kubernetes sources and fails on any name missing here, so a
 * default that a new Kubernetes version adds cannot be missed silently.
 */
export const GO_POD_DEFAULTERS: readonly string[] = [
  'SetDefaults_Pod',
  'SetDefaults_PodSpec',
  'SetDefaults_Volume',
  'SetDefaults_HostPathVolumeSource',
  'SetDefaults_SecretVolumeSource',
  'ISCSIInterface',
  'RBDPool',
  'RadosUser',
  'Keyring',
  'SetDefaults_DownwardAPIVolumeSource',
  'SetDefaults_ObjectFieldSelector',
  'SetDefaults_ConfigMapVolumeSource',
  'CachingMode',
  'FSType',
  'ReadOnly',
  'Kind',
  'SetDefaults_ProjectedVolumeSource',
  'SetDefaults_ServiceAccountTokenProjection',
  'StorageMode',
  'SetDefaults_PersistentVolumeClaimSpec',
  'SetDefaults_ResourceList',
  'SetDefaults_Container',
  'SetDefaults_EphemeralContainer',
  'Protocol',
  'Optional',
  'SetDefaults_Probe',
  'SetDefaults_HTTPGetAction',
  'Service',
];

const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/** Every volume source of v1.VolumeSource: a volume naming none of them is an emptyDir. */
const VOLUME_SOURCES = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi',
  'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc',
  'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected',
  'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image',
] as const;

/** Mode 0644, the default of secret, configMap, downwardAPI and projected volumes. */
const DEFAULT_VOLUME_MODE = 420;

const PROBES = ['livenessProbe', 'readinessProbe', 'startupProbe'] as const;

// Go reads an absent field as its zero value; a YAML null is absent too.
const unsetString = (v: unknown): boolean => v === undefined || v === null || v === '';
const unsetNumber = (v: unknown): boolean => v === undefined || v === null || v === 0;
const unset = (v: unknown): boolean => v === undefined || v === null;

function objects(list: unknown): JsonObject[] {
  return Array.isArray(list) ? list.filter(isJsonObject) : [];
}

function setIf(obj: JsonObject, key: string, isUnset: (v: unknown) => boolean, value: unknown): void {
  if (isUnset(obj[key])) obj[key] = value;
}

/** SetDefaults_Pod: requests from limits, pod-level resources, service links, host-network ports. */
function defaultPod(spec: JsonObject): void {
  for (const key of ['containers', 'initContainers'] as const) {
    for (const c of objects(spec[key])) if (isJsonObject(c.resources)) requestsFromLimits(c.resources);
  }
  defaultPodLevelResources(spec);
  setIf(spec, 'enableServiceLinks', unset, true);
  if (spec.hostNetwork === true) {
    for (const key of ['containers', 'initContainers'] as const) {
      for (const c of objects(spec[key])) {
        for (const port of objects(c.ports)) if (unsetNumber(port.hostPort)) port.hostPort = port.containerPort;
      }
    }
  }
}

/** A limit with no request of its name gives that request its value. */
function requestsFromLimits(resources: JsonObject): void {
  if (!isJsonObject(resources.limits)) return;
  if (unset(resources.requests)) resources.requests = {};
  if (!isJsonObject(resources.requests)) return;
  for (const [name, value] of Object.entries(resources.limits)) {
    if (!(name in resources.requests)) resources.requests[name] = value;
  }
}

/** SetDefaults_PodSpec. */
function defaultPodSpec(spec: JsonObject): void {
  setIf(spec, 'dnsPolicy', unsetString, 'ClusterFirst');
  setIf(spec, 'restartPolicy', unsetString, 'Always');
  setIf(spec, 'securityContext', unset, {});
  setIf(spec, 'terminationGracePeriodSeconds', unset, 30);
  setIf(spec, 'schedulerName', unsetString, 'default-scheduler');
}

function defaultVolume(volume: JsonObject): void {
  if (VOLUME_SOURCES.every((key) => unset(volume[key]))) volume.emptyDir = {};
  const source = (key: string): JsonObject | undefined => (isJsonObject(volume[key]) ? volume[key] : undefined);
  const hostPath = source('hostPath');
  if (hostPath) setIf(hostPath, 'type', unset, '');
  for (const key of ['secret', 'configMap']) {
    const s = source(key);
    if (s) setIf(s, 'defaultMode', unset, DEFAULT_VOLUME_MODE);
  }
  const iscsi = source('iscsi');
  if (iscsi) setIf(iscsi, 'iscsiInterface', unsetString, 'default');
  const rbd = source('rbd');
  if (rbd) {
    setIf(rbd, 'pool', unsetString, 'rbd');
    setIf(rbd, 'user', unsetString, 'admin');
    setIf(rbd, 'keyring', unsetString, '/etc/ceph/keyring');
  }
  const downwardAPI = source('downwardAPI');
  if (downwardAPI) {
    setIf(downwardAPI, 'defaultMode', unset, DEFAULT_VOLUME_MODE);
    defaultFieldRefs(downwardAPI.items);
  }
  const azureDisk = source('azureDisk');
  if (azureDisk) {
    setIf(azureDisk, 'cachingMode', unset, 'ReadWrite');
    setIf(azureDisk, 'fsType', unset, 'ext4');
    setIf(azureDisk, 'readOnly', unset, false);
    setIf(azureDisk, 'kind', unset, 'Shared');
  }
  const projected = source('projected');
  if (projected) {
    setIf(projected, 'defaultMode', unset, DEFAULT_VOLUME_MODE);
    for (const s of objects(projected.sources)) {
      if (isJsonObject(s.downwardAPI)) defaultFieldRefs(s.downwardAPI.items);
      if (isJsonObject(s.serviceAccountToken)) setIf(s.serviceAccountToken, 'expirationSeconds', unset, 3600);
    }
  }
  const scaleIO = source('scaleIO');
  if (scaleIO) {
    setIf(scaleIO, 'storageMode', unsetString, 'ThinProvisioned');
    setIf(scaleIO, 'fsType', unsetString, 'xfs');
  }
  const ephemeral = source('ephemeral');
  const claimSpec = isJsonObject(ephemeral?.volumeClaimTemplate) ? ephemeral.volumeClaimTemplate.spec : undefined;
  if (isJsonObject(claimSpec)) {
    setIf(claimSpec, 'volumeMode', unset, 'Filesystem');
    if (isJsonObject(claimSpec.resources)) defaultRequirements(claimSpec.resources);
  }
}

/** Items of a downwardAPI volume or projection: their fieldRef's apiVersion. */
function defaultFieldRefs(items: unknown): void {
  for (const item of objects(items)) if (isJsonObject(item.fieldRef)) defaultFieldSelector(item.fieldRef);
}

/** SetDefaults_ObjectFieldSelector. */
function defaultFieldSelector(ref: JsonObject): void {
  setIf(ref, 'apiVersion', unsetString, 'v1');
}

/** SetDefaults_ResourceList on a limits/requests pair. */
function defaultRequirements(resources: JsonObject): void {
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
}

/** SetDefaults_Container and the defaults of what a container holds. */
function defaultContainer(c: JsonObject): void {
  setIf(c, 'imagePullPolicy', unsetString, defaultPullPolicy(typeof c.image === 'string' ? c.image : ''));
  setIf(c, 'terminationMessagePath', unsetString, '/dev/termination-log');
  setIf(c, 'terminationMessagePolicy', unsetString, 'File');
  for (const port of objects(c.ports)) setIf(port, 'protocol', unsetString, 'TCP');
  for (const env of objects(c.env)) {
    if (!isJsonObject(env.valueFrom)) continue;
    if (isJsonObject(env.valueFrom.fieldRef)) defaultFieldSelector(env.valueFrom.fieldRef);
    if (isJsonObject(env.valueFrom.fileKeyRef)) setIf(env.valueFrom.fileKeyRef, 'optional', unset, false);
  }
  if (isJsonObject(c.resources)) defaultRequirements(c.resources);
  for (const key of PROBES) if (isJsonObject(c[key])) defaultProbe(c[key]);
  if (isJsonObject(c.lifecycle)) {
    for (const hook of ['postStart', 'preStop']) {
      const handler = c.lifecycle[hook];
      if (isJsonObject(handler) && isJsonObject(handler.httpGet)) defaultHTTPGet(handler.httpGet);
    }
  }
}

/** SetDefaults_Probe, then its handler's defaults. */
function defaultProbe(probe: JsonObject): void {
  setIf(probe, 'timeoutSeconds', unsetNumber, 1);
  setIf(probe, 'periodSeconds', unsetNumber, 10);
  setIf(probe, 'successThreshold', unsetNumber, 1);
  setIf(probe, 'failureThreshold', unsetNumber, 3);
  if (isJsonObject(probe.httpGet)) defaultHTTPGet(probe.httpGet);
  if (isJsonObject(probe.grpc)) setIf(probe.grpc, 'service', unset, '');
}

/** SetDefaults_HTTPGetAction. */
function defaultHTTPGet(action: JsonObject): void {
  setIf(action, 'path', unsetString, '/');
  setIf(action, 'scheme', unsetString, 'HTTP');
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
