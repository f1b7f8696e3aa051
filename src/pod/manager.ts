import type { Registry } from 'prom-client';
import { kpError } from '../errors.js';
import type { MirrorClient } from './mirror-client.js';
import { buildPodFullName, getPodFullName, isMirrorPod, isMirrorPodOf, isStaticPod } from './classify.js';
import { countEphemeralContainers, registerEphemeralContainersGauge } from './metrics.js';
import { fullNameOf, PodsByUID } from './pods-by-uid.js';
import { hasUnambiguousFullName, NamespacedNameIndex } from './namespaced-name-index.js';
import { PodsByFullName } from './pods-by-full-name.js';
import type { ConfigMapManager, SecretManager } from './object-managers.js';
import { MirrorUIDTable } from './mirror-uid-table.js';
import { asMirrorPodUID, asResolvedPodUID, type MirrorPodUID, type Pod, type ResolvedPodUID } from './types.js';
import { podUID } from '../values/pod-format.js';

export interface PodManagerOptions {
  /** Where `kubelet_managed_ephemeral_containers` is registered; nowhere by default (`managedEphemeralContainers` reads it). */
  registry?: Registry;
  /** v1.25: told about every pod added or updated (unless terminated) and every pod removed. */
  secretManager?: SecretManager;
  /** v1.25: as `secretManager`. */
  configMapManager?: ConfigMapManager;
  /** v1.25: the manager embedded its mirror client; `createMirrorPod`/`deleteMirrorPod` use it. */
  mirrorClient?: MirrorClient;
}

export interface PodAndMirrorPod {
  pod: Pod | undefined;
  mirrorPod: Pod | undefined;
  /** True when the pod asked about was itself a mirror pod. */
  wasMirror: boolean;
}

export interface PodsAndMirrorPods {
  readonly pods: readonly Pod[];
  readonly mirrorPods: readonly Pod[];
  /** Full names of mirror pods that have no non-mirror pod of the same full name. */
  readonly orphanedMirrorPodFullNames: readonly string[];
}

export interface UIDTranslations {
  /** Every static pod; '' for one without a mirror. */
  podToMirror: Map<ResolvedPodUID, MirrorPodUID | ''>;
  mirrorToPod: Map<MirrorPodUID, ResolvedPodUID>;
}

/**
 * The in-memory index of the pods this node should run and of the mirror pods reflecting its
 * static pods, with the kubelet's `basicManager` semantics (v1.29) plus the v1.25 extras.
 *
 * Static pods and their mirrors share a full name but not a UID; the manager pairs them by
 * full name and translates a mirror's UID to its static pod's, so that callers that learn a
 * mirror UID from the API server can act on the pod the node actually runs.
 *
 * Pods are stored as given and must not be mutated afterwards. List results are frozen
 * snapshots, rebuilt only after a change, so reading them from an unchanged manager is O(1).
 */
export class PodManager {
  // Non-mirror pods (static and API pods) by UID and by full name; the two can disagree, as in
  // the kubelet, because the full-name index keeps whichever pod wrote a name last.
  // Every index is a dictionary-mode object (dictionary.ts) and keeps removed keys in place for
  // a while (PodsByUID, TombstoneMap): pods come and go under the same UIDs and names.
  #podByUID = new PodsByUID<ResolvedPodUID>();
  // Both full-name indexes: non-mirror pods and mirror pods.
  #byFullName = new PodsByFullName();
  // The same non-mirror entries for names that split one way only, for getPodByName.
  #podByNamespacedName = new NamespacedNameIndex(this.#byFullName);
  #mirrorPodByUID = new PodsByUID<MirrorPodUID>();
  // mirror UID → static UID. Written when either half of a pair arrives.
  #translationByUID = new MirrorUIDTable();

  #ephemeralContainers = 0;
  #podsSnapshot: readonly Pod[] | undefined;
  #pairSnapshot: PodsAndMirrorPods | undefined;

  readonly #secretManager: SecretManager | undefined;
  readonly #configMapManager: ConfigMapManager | undefined;
  readonly #mirrorClient: MirrorClient | undefined;

  constructor(options: PodManagerOptions = {}) {
    this.#secretManager = options.secretManager;
    this.#configMapManager = options.configMapManager;
    this.#mirrorClient = options.mirrorClient;
    if (options.registry !== undefined) registerEphemeralContainersGauge(options.registry, () => this.#ephemeralContainers);
  }

  /** The value of `kubelet_managed_ephemeral_containers`: ephemeral containers in the pods held. */
  get managedEphemeralContainers(): number {
    return this.#ephemeralContainers;
  }

  getPodByFullName(podFullName: string): Pod | undefined {
    return this.#byFullName.getPod(podFullName);
  }

  getPodByName(namespace: string, name: string): Pod | undefined {
    return (
      this.#podByNamespacedName.get(namespace, name) ??
      (hasUnambiguousFullName(name, namespace) ? undefined : this.#byFullName.getPod(buildPodFullName(name, namespace)))
    );
  }

  /** Non-mirror pods only: a mirror UID finds nothing here (translate it first). */
  getPodByUID(uid: string): Pod | undefined {
    return this.#podByUID.get(asResolvedPodUID(uid));
  }

  /** The non-mirror pod with the mirror's full name, static or not. */
  getPodByMirrorPod(mirrorPod: Pod): Pod | undefined {
    return this.#podOf(mirrorPod);
  }

  /** The mirror pod of that full name (`name_namespace`), whether or not its static pod is known. */
  getMirrorPodByFullName(podFullName: string): Pod | undefined {
    return this.#byFullName.getMirror(podFullName);
  }

  getMirrorPodByPod(pod: Pod): Pod | undefined {
    return this.#mirrorOf(pod);
  }

  /**
   * Resolves either half of a pair to both halves. The pod passed in is returned as given,
   * not the stored object of that UID.
   */
  getPodAndMirrorPod(pod: Pod): PodAndMirrorPod {
    if (isMirrorPod(pod)) return { pod: this.#podOf(pod), mirrorPod: pod, wasMirror: true };
    return { pod, mirrorPod: this.#mirrorOf(pod), wasMirror: false };
  }

  /** All non-mirror pods, unordered; a frozen snapshot shared until the next change. */
  getPods(): readonly Pod[] {
    return (this.#podsSnapshot ??= Object.freeze(this.#podByUID.pods()));
  }

  getPodsAndMirrorPods(): PodsAndMirrorPods {
    if (this.#pairSnapshot === undefined) {
      this.#pairSnapshot = Object.freeze({
        pods: this.getPods(),
        mirrorPods: Object.freeze(this.#mirrorPodByUID.pods()),
        orphanedMirrorPodFullNames: Object.freeze(this.#byFullName.orphanedMirrorFullNames()),
      });
    }
    return this.#pairSnapshot;
  }

  /** v1.25 name for the third part of `getPodsAndMirrorPods()`. */
  getOrphanedMirrorPodNames(): string[] {
    return [...this.getPodsAndMirrorPods().orphanedMirrorPodFullNames];
  }

  /**
   * Replaces everything the manager holds with `pods`. The indexes are emptied in place rather
   * than replaced: a reload mostly stores the same UIDs and names again, and refilling their
   * entries costs a fraction of inserting them into new tables.
   */
  setPods(pods: readonly Pod[]): void {
    this.#podByUID.emptyAll();
    this.#byFullName.holeAll();
    this.#mirrorPodByUID.emptyAll();
    this.#translationByUID.holeAll();
    this.#podByNamespacedName = new NamespacedNameIndex(this.#byFullName);
    this.#ephemeralContainers = 0;
    for (const pod of pods) this.#upsert(pod);
    this.#podByUID.settle();
    this.#byFullName.settle();
    this.#mirrorPodByUID.settle();
    this.#translationByUID.settle();
    this.#changed();
  }

  /** Same as `updatePod`: both insert or replace. */
  addPod(pod: Pod): void {
    this.updatePod(pod);
  }

  updatePod(pod: Pod): void {
    this.#upsert(pod);
    this.#changed();
  }

  /**
   * Removes by UID from the UID index and by full name from the full-name index.
   * Quirk kept from the kubelet: the full-name entry goes even when it holds a different pod
   * (another UID with the same name), and removing a static pod leaves the translation from
   * its mirror in place until the mirror itself is removed or re-paired.
   */
  removePod(pod: Pod): void {
    this.#secretManager?.unregisterPod(pod);
    this.#configMapManager?.unregisterPod(pod);
    const uid = podUID(pod);
    if (isMirrorPod(pod)) {
      const mirrorUID = asMirrorPodUID(uid);
      const slot = this.#mirrorPodByUID.slot(mirrorUID);
      if (slot !== undefined) this.#mirrorPodByUID.remove(slot);
      this.#byFullName.deleteMirror(fullNameOf(pod, slot));
      this.#translationByUID.delete(mirrorUID);
    } else {
      const slot = this.#podByUID.slot(asResolvedPodUID(uid));
      if (slot !== undefined) {
        // Count what was stored, not what was passed: the kubelet's delta bookkeeping counted
        // the argument and drifted when it differed from the stored pod or was never added.
        this.#ephemeralContainers -= countEphemeralContainers(slot.pod);
        this.#podByUID.remove(slot);
      }
      this.#byFullName.deletePod(fullNameOf(pod, slot));
      this.#podByNamespacedName.unindexed(pod);
    }
    this.#changed();
  }

  /** v1.25 name of `removePod`. */
  deletePod(pod: Pod): void {
    this.removePod(pod);
  }

  /** A mirror UID paired with a static pod becomes that pod's UID; anything else is returned as is. */
  translatePodUID(uid: string): ResolvedPodUID {
    if (uid === '') return asResolvedPodUID('');
    return this.#translationByUID.get(asMirrorPodUID(uid)) ?? asResolvedPodUID(uid);
  }

  /**
   * Both directions of the translation. Every static pod appears in `podToMirror`, with ''
   * when it has no mirror. Translations outliving their static pod (see `removePod`) appear
   * too, as in the kubelet. When two mirror UIDs point at one static pod (a mirror replaced
   * by another before the first was removed) the kubelet's answer depends on Go's map order;
   * ours is the same for the same sequence of calls.
   */
  getUIDTranslations(): UIDTranslations {
    const podToMirror = new Map<ResolvedPodUID, MirrorPodUID | ''>();
    const mirrorToPod = new Map<MirrorPodUID, ResolvedPodUID>();
    this.#podByUID.forEach((pod, uid) => {
      if (isStaticPod(pod)) podToMirror.set(uid, '');
    });
    this.#translationByUID.forEach((podUID, mirrorUID) => {
      mirrorToPod.set(mirrorUID, podUID);
      podToMirror.set(podUID, mirrorUID);
    });
    return { podToMirror, mirrorToPod };
  }

  /** v1.25 method form of the package function `isMirrorPodOf`. */
  isMirrorPodOf(mirrorPod: Pod, pod: Pod): boolean {
    return isMirrorPodOf(mirrorPod, pod);
  }

  /** v1.25: the manager embedded its mirror client. */
  createMirrorPod(pod: Pod): Promise<void> {
    if (!this.#mirrorClient) return Promise.reject(kpError('KP_ERR_NO_MIRROR_CLIENT', ['createMirrorPod']));
    return this.#mirrorClient.createMirrorPod(pod);
  }

  deleteMirrorPod(podFullName: string, uid?: string): Promise<boolean> {
    if (!this.#mirrorClient) return Promise.reject(kpError('KP_ERR_NO_MIRROR_CLIENT', ['deleteMirrorPod']));
    return this.#mirrorClient.deleteMirrorPod(podFullName, uid);
  }

  #upsert(pod: Pod): void {
    if (this.#secretManager || this.#configMapManager) this.#registerWithObjectManagers(pod);
    const uid = podUID(pod);
    if (isMirrorPod(pod)) {
      const mirrorUID = asMirrorPodUID(uid);
      const fullName = this.#mirrorPodByUID.store(mirrorUID, pod);
      const staticPod = this.#byFullName.setMirror(fullName, pod);
      if (staticPod) this.#setTranslation(mirrorUID, asResolvedPodUID(podUID(staticPod)));
    } else {
      const resolvedUID = asResolvedPodUID(uid);
      const slot = this.#podByUID.slot(resolvedUID);
      this.#ephemeralContainers += countEphemeralContainers(pod) - countEphemeralContainers(slot?.pod);
      const fullName = this.#podByUID.store(resolvedUID, pod, slot);
      // Last writer wins: two pods with one full name replace each other here.
      const mirrorPod = this.#byFullName.setPod(fullName, pod);
      this.#podByNamespacedName.indexed(pod);
      if (mirrorPod) this.#setTranslation(asMirrorPodUID(podUID(mirrorPod)), resolvedUID);
    }
  }

  /**
   * The non-mirror pod with `mirror`'s full name, looked up by namespace then name from the
   * strings the mirror already holds. That index holds only names that split one way only, so
   * a hit is the answer. So is a miss, unless this name could split another way (a scan of
   * both strings, paid only on a miss): only then is the full name looked up, the one kept in
   * the mirror's slot when the mirror is stored, or else built. The same goes for getPodByName.
   */
  #podOf(mirror: Pod): Pod | undefined {
    const name = mirror.metadata?.name ?? '';
    const namespace = mirror.metadata?.namespace ?? '';
    const pod = this.#podByNamespacedName.get(namespace, name);
    if (pod !== undefined || hasUnambiguousFullName(name, namespace)) return pod;
    return this.#byFullName.getPod(fullNameOf(mirror, this.#mirrorPodByUID.slot(asMirrorPodUID(podUID(mirror)))));
  }

  /**
   * The mirror pod with `pod`'s full name; as `#podOf`, the other way, except that a miss needs
   * no scan while no mirror's name splits more than one way.
   */
  #mirrorOf(pod: Pod): Pod | undefined {
    const name = pod.metadata?.name ?? '';
    const namespace = pod.metadata?.namespace ?? '';
    const mirror = this.#byFullName.getMirrorByName(namespace, name);
    if (mirror !== undefined || !this.#byFullName.hasAmbiguousMirrorNames || hasUnambiguousFullName(name, namespace)) return mirror;
    return this.#byFullName.getMirror(fullNameOf(pod, this.#podByUID.slot(asResolvedPodUID(podUID(pod)))));
  }

  #setTranslation(mirrorUID: MirrorPodUID, podUID: ResolvedPodUID): void {
    if (this.#translationByUID.get(mirrorUID) !== podUID) this.#translationByUID.set(mirrorUID, podUID);
  }

  // v1.25: terminated pods no longer need their secrets and configmaps watched.
  #registerWithObjectManagers(pod: Pod): void {
    const phase = pod.status?.phase;
    const terminated = phase === 'Failed' || phase === 'Succeeded';
    for (const manager of [this.#secretManager, this.#configMapManager]) {
      if (!manager) continue;
      if (terminated) manager.unregisterPod(pod);
      else manager.registerPod(pod);
    }
  }

  #changed(): void {
    this.#podsSnapshot = undefined;
    this.#pairSnapshot = undefined;
  }
}
