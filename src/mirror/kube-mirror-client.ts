import type { V1OwnerReference } from '@kubernetes/client-node';
import type { CoreV1Api } from '../kube/typed-apis.js';
import { answerUseOptions } from '../kube/request-options.js';

import { CONFIG_HASH_ANNOTATION_KEY, CONFIG_MIRROR_ANNOTATION_KEY } from '../constants.js';
import { kpError } from '../errors.js';
import { getPodFullName, parsePodFullName } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import type { MirrorClient } from '../pod/mirror-client.js';
import { ApiStatusError, apiFailureCause, apiStatusOf } from '../kube/api-error.js';

/** The part of a Node the mirror client needs: its UID for the owner reference. */
export interface MirrorNode {
  metadata?: { uid?: string; name?: string };
}

/** A pino-compatible logger (only `warn` and `debug` are used). */
export interface MirrorClientLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface KubeMirrorClientOptions {
  /** Talks to the API server, authenticated as the node. Undefined = standalone: create and delete do nothing. */
  api?: CoreV1Api | undefined;
  /** This node's name: mirror pods get a controller owner reference to it. */
  nodeName: string;
  /**
   * Reads this node's Node object (in the kubelet, from the node informer's cache). It is
   * called with `nodeName`; resolving undefined means the node does not exist (yet).
   */
  getNode: (nodeName: string) => Promise<MirrorNode | undefined>;
  logger?: MirrorClientLogger;
  /**
   * Called when the API server refused a delete (any answer but 404 and a failed UID
   * precondition, which are expected races): `uid` is the precondition given, if any.
   */
  onDeleteRefused?: (podFullName: string, uid: string | undefined, refusal: ApiStatusError) => void;
}

/** The MirrorClient of the agent: see `KubeMirrorClient` for what create and delete do. */
export function createKubeMirrorClient(options: KubeMirrorClientOptions): MirrorClient {
  return new KubeMirrorClient(options);
}

/** A DELETE's options: the deleted pod the server answers with is not read. */
const READ_NOTHING = answerUseOptions('nothing');

/**
 * The MirrorClient that talks to a real API server through a CoreV1Api (src/kube/typed-apis.ts).
 *
 * Creating: the mirror is a copy of the static pod (the static pod is not changed) with
 * `kubernetes.io/config.mirror` set to the static pod's `config.hash` ("" if it has none)
 * and exactly one owner reference, the controlling Node. The fields the API server owns
 * (uid, resourceVersion, creationTimestamp) are dropped; the server assigns a new UID. If a
 * pod of that name already exists, the create counts as done only when that pod is a mirror
 * with the same hash.
 *
 * Deleting: grace period 0, with a UID precondition when a UID is given. Resolves false
 * (never rejects) when the pod is missing, has another UID, or the API server refuses; only
 * a full name that does not parse rejects.
 */
export class KubeMirrorClient implements MirrorClient {
  readonly #api: CoreV1Api | undefined;
  readonly #nodeName: string;
  readonly #getNode: (nodeName: string) => Promise<MirrorNode | undefined>;
  readonly #logger: MirrorClientLogger | undefined;
  readonly #onDeleteRefused: KubeMirrorClientOptions['onDeleteRefused'];

  constructor(options: KubeMirrorClientOptions) {
    this.#onDeleteRefused = options.onDeleteRefused;
    this.#api = options.api;
    this.#nodeName = options.nodeName;
    this.#getNode = options.getNode;
    this.#logger = options.logger;
  }

  async createMirrorPod(staticPod: Pod): Promise<void> {
    const api = this.#api;
    if (api === undefined) return;
    const fullName = getPodFullName(staticPod);
    const hash = staticPod.metadata?.annotations?.[CONFIG_HASH_ANNOTATION_KEY] ?? '';
    const nodeUID = await this.#nodeUID();

    const owner: V1OwnerReference = {
      apiVersion: 'v1',
      kind: 'Node',
      name: this.#nodeName,
      uid: nodeUID,
      controller: true,
    };
    // Copy the top level and metadata only: nested objects (spec, labels) are shared with the
    // static pod but never written to.
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, ...metadata } = staticPod.metadata ?? {};
    const mirror: Pod = {
      ...staticPod,
      metadata: {
        ...metadata,
        annotations: { ...staticPod.metadata?.annotations, [CONFIG_MIRROR_ANNOTATION_KEY]: hash },
        ownerReferences: [owner],
      },
    };
    const namespace = metadata.namespace ?? '';

    let alreadyExists: ApiStatusError;
    try {
      await api.createNamespacedPod({ namespace, body: mirror });
      return;
    } catch (err) {
      const status = apiStatusOf(err);
      if (status.code !== 409 || status.reason !== 'AlreadyExists') {
        throw kpError('KP_ERR_MIRROR_CREATE', [fullName, status.message], { cause: new ApiStatusError(status) });
      }
      alreadyExists = new ApiStatusError(status);
    }

    // AlreadyExists: done if that pod is our mirror with the same hash.
    let existing: Pod;
    try {
      existing = await api.readNamespacedPod({ name: metadata.name ?? '', namespace });
    } catch (err) {
      const status = apiStatusOf(err);
      // A node may only read pods bound to it, so a foreign pod holding the name ends here.
      // The cause is the create's AlreadyExists: what callers branch on is that the name is taken.
      throw kpError('KP_ERR_MIRROR_CREATE', [fullName, `a pod of that name already exists and reading it failed: ${status.message}`], {
        cause: alreadyExists,
      });
    }
    const existingHash = existing.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY];
    if (existingHash !== hash) {
      throw kpError('KP_ERR_MIRROR_HASH_CONFLICT', [fullName, hash, existingHash ?? '<not a mirror pod>']);
    }
  }

  async deleteMirrorPod(podFullName: string, uid?: string): Promise<boolean> {
    const { name, namespace } = parsePodFullName(podFullName);
    const api = this.#api;
    if (api === undefined) return false;
    try {
      // The API server reads DeleteOptions from the body when there is one and then ignores
      // the query parameters, so the grace period goes in the body too.
      await api.deleteNamespacedPod(
        {
          name,
          namespace,
          gracePeriodSeconds: 0,
          body: uid !== undefined ? { gracePeriodSeconds: 0, preconditions: { uid } } : { gracePeriodSeconds: 0 },
        },
        READ_NOTHING,
      );
      return true;
    } catch (err) {
      const status = apiStatusOf(err);
      // NotFound and a failed UID precondition (409 Conflict) are expected races: silent.
      if (status.code === 404 || status.code === 409) {
        this.#logger?.debug({ pod: podFullName, uid, reason: status.reason }, 'mirror pod not deleted');
        return false;
      }
      const refusal = new ApiStatusError(status);
      this.#logger?.warn({ pod: podFullName, uid, httpStatus: status.code, reason: status.reason, err: refusal }, 'failed to delete mirror pod');
      if (status.code !== undefined) this.#onDeleteRefused?.(podFullName, uid, refusal);
      return false;
    }
  }

  async #nodeUID(): Promise<string> {
    let node: MirrorNode | undefined;
    try {
      node = await this.#getNode(this.#nodeName);
    } catch (err) {
      // A getter built on an API client may throw ApiException, whose message embeds the
      // response body and headers: keep only the Status message.
      const status = apiStatusOf(err);
      throw kpError('KP_ERR_MIRROR_NODE_UID', [this.#nodeName, status.message], {
        cause: apiFailureCause(err),
      });
    }
    if (node === undefined) throw kpError('KP_ERR_MIRROR_NODE_UID', [this.#nodeName, 'node not found']);
    const uid = node.metadata?.uid ?? '';
    if (uid === '') throw kpError('KP_ERR_MIRROR_NODE_UID', [this.#nodeName, 'UID unset']);
    return uid;
  }
}
