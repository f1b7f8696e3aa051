/**
 * Annotation keys, source names and update kinds shared by every part of kubelet-pods.
 * The strings are the kubelet's own (pkg/kubelet/types): they are data other tools read.
 */

/** Which source a pod came from; the merger stamps it on every pod it passes on. */
export const CONFIG_SOURCE_ANNOTATION_KEY = 'kubernetes.io/config.source';
/** Present on a mirror pod (any value, even ""); the value is its static pod's hash. */
export const CONFIG_MIRROR_ANNOTATION_KEY = 'kubernetes.io/config.mirror';
/** On a static pod: its hash, equal to its UID. */
export const CONFIG_HASH_ANNOTATION_KEY = 'kubernetes.io/config.hash';
/** When the merger first saw this UID from this source. */
export const CONFIG_FIRST_SEEN_ANNOTATION_KEY = 'kubernetes.io/config.seen';

export const FILE_SOURCE = 'file';
export const HTTP_SOURCE = 'http';
export const API_SERVER_SOURCE = 'api';
/** Stands for every source at once, as in the kubelet's `--pod-source` style lists. */
export const ALL_SOURCE = '*';

export type PodSourceName = typeof FILE_SOURCE | typeof HTTP_SOURCE | typeof API_SERVER_SOURCE;

export const NAMESPACE_DEFAULT = 'default';

/**
 * Kinds of pod updates, in the kubelet's numbering (the numbers only matter in logs).
 * SET replaces a source's whole set; the merger turns it into the other kinds.
 */
export const PodOperation = {
  SET: 'SET',
  ADD: 'ADD',
  DELETE: 'DELETE',
  REMOVE: 'REMOVE',
  UPDATE: 'UPDATE',
  RECONCILE: 'RECONCILE',
} as const;
export type PodOperation = (typeof PodOperation)[keyof typeof PodOperation];

/** Maximum size of a manifest file or an HTTP manifest body: 10 MiB. */
export const MAX_CONFIG_LENGTH = 10 * 1024 * 1024;

/**
 * The kubelet version our Node reports (`nodeInfo.kubeletVersion`) and our requests' User-Agent
 * carries: the release whose behaviour we follow, marked as ours.
 */
export const KUBELET_VERSION = 'v1.34.0-kubelet-pods';
