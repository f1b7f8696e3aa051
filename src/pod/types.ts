import type { V1Pod } from '@kubernetes/client-node';

/**
 * The pod type used throughout: client-node's V1Pod. Stored pods are treated as immutable:
 * the pod manager and the merger keep the objects they are given, so callers must not mutate
 * a pod after handing it over (replace it with a new object instead).
 */
export type Pod = V1Pod;

/** The UID of a pod the kubelet runs (a static or an API pod): never a mirror pod's UID. */
export type ResolvedPodUID = string & { readonly __brand: 'ResolvedPodUID' };

/** The UID the API server gave a mirror pod; it differs from its static pod's UID. */
export type MirrorPodUID = string & { readonly __brand: 'MirrorPodUID' };

export const asResolvedPodUID = (uid: string): ResolvedPodUID => uid as ResolvedPodUID;
export const asMirrorPodUID = (uid: string): MirrorPodUID => uid as MirrorPodUID;
