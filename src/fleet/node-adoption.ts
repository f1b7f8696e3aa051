import type { V1Node } from '@kubernetes/client-node';
import { childLogger, type Logger } from '../logger.js';
import { quantityValue } from '../values/quantity.js';
import { isSelectorTemplate, type NodeTemplate } from './fleet-config.js';

/**
 * Which Nodes created by others (an autoscaler, kubectl) the fleet takes over, from what the
 * node cache's one watch shows (src/fleet/node-cache.ts): a Node whose labels and annotations
 * match a selector template is adopted (`onAdopt`: the fleet starts an agent for it), and
 * released (`onRelease`: the fleet stops that agent and forgets it) when it is deleted or no
 * longer matches. A node a template names is the fleet's by name and never adopted. The first
 * matching selector template in the file wins, and a node keeps the template it was adopted
 * by while it still matches any.
 *
 * A Node being deleted (deletionTimestamp set, finalizers pending) is still adopted and kept:
 * an autoscaler drains it first, and its pods' deletions need a kubelet to finish them.
 */
export interface NodeAdoption {
  /** A Node the watch shows (listed, added or modified), whoever's it is. */
  seen(node: V1Node): void;
  /** The Node `name` with UID `uid` is gone (deleted, or missing from a relist). */
  gone(name: string, uid: string | undefined): void;
  isAdopted(name: string): boolean;
  /** The adopted nodes with their template's index. */
  adopted(): ReadonlyMap<string, number>;
}

export type ReleaseReason = 'deleted' | 'unmatched';

export interface NodeAdoptionOptions {
  templates: readonly NodeTemplate[];
  /** Nodes named by a template: the fleet's by name, never adopted. */
  isNamed: (name: string) => boolean;
  /** Whether this replica may run the node at all (`--shard i/n`); every node by default. */
  inShard?: (name: string) => boolean;
  onAdopt: (name: string, template: number, node: V1Node) => void;
  onRelease: (name: string, reason: ReleaseReason) => void;
  logger?: Logger;
}

/** The index of the first selector template whose selectors all match `node`, else undefined. */
export function selectingTemplate(templates: readonly NodeTemplate[], node: V1Node): number | undefined {
  const labels = node.metadata?.labels;
  const annotations = node.metadata?.annotations;
  const index = templates.findIndex(
    (t) => isSelectorTemplate(t) && (t.labelSelector?.matches(labels) ?? true) && (t.annotationSelector?.matches(annotations) ?? true),
  );
  return index < 0 ? undefined : index;
}

export function createNodeAdoption(options: NodeAdoptionOptions): NodeAdoption {
  const log = childLogger(options.logger, { component: 'node-adoption' });
  const taken = new Map<string, { template: number; uid: string | undefined }>();
  const release = (name: string, reason: ReleaseReason): void => {
    taken.delete(name);
    log.info({ node: name, reason }, reason === 'deleted' ? 'adopted node deleted; released' : 'node no longer matches a selector; released');
    options.onRelease(name, reason);
  };
  return {
    seen(node) {
      const name = node.metadata?.name;
      if (name === undefined || options.isNamed(name)) return;
      const have = taken.get(name);
      const template = selectingTemplate(options.templates, node);
      if (template === undefined || !(options.inShard?.(name) ?? true)) {
        if (have !== undefined) release(name, 'unmatched');
        return;
      }
      if (have !== undefined) {
        // The same name created again keeps its agent, which takes the new Node as its own.
        have.uid = node.metadata?.uid;
        return;
      }
      taken.set(name, { template, uid: node.metadata?.uid });
      log.info({ node: name, template }, 'adopting node');
      options.onAdopt(name, template, node);
    },
    gone(name, uid) {
      const have = taken.get(name);
      if (have === undefined) return;
      // A deletion of an older Node of this name says nothing about the current one.
      if (uid !== undefined && have.uid !== undefined && uid !== have.uid) return;
      release(name, 'deleted');
    },
    isAdopted: (name) => taken.has(name),
    adopted: () => new Map([...taken].map(([name, t]) => [name, t.template])),
  };
}

/**
 * The pods an adopted Node allows, as its creator set them (allocatable, else capacity): the
 * node admits pods against it as the kubelet against its `maxPods`. Undefined when it has none.
 */
export function adoptedMaxPods(node: V1Node): number | undefined {
  const text = node.status?.allocatable?.['pods'] ?? node.status?.capacity?.['pods'];
  const pods = text === undefined ? Number.NaN : quantityValue(String(text));
  return Number.isSafeInteger(pods) && pods >= 0 ? pods : undefined;
}
