// Pod builders and assertions shared by the pod manager tests (test/unit/pod/*.test.ts).

import assert from 'node:assert/strict';
import type { Registry } from 'prom-client';
import {
  API_SERVER_SOURCE,
  CONFIG_HASH_ANNOTATION_KEY,
  CONFIG_MIRROR_ANNOTATION_KEY,
  CONFIG_SOURCE_ANNOTATION_KEY,
  FILE_SOURCE,
  NAMESPACE_DEFAULT,
} from '../../../src/constants.js';
import { MANAGED_EPHEMERAL_CONTAINERS } from '../../../src/pod/metrics.js';
import type { Pod } from '../../../src/pod/types.js';

/** The kinds of the kubelet test helper `newPod`, plus a pod with no annotations at all. */
export type PodKind = 'static' | 'mirror' | 'extra' | 'plain';

export interface PodOptions {
  /** Number of ephemeral containers in the spec. */
  ephemeral?: number;
  phase?: string;
  hash?: string;
  mirrorValue?: string;
}

export function newPod(uid: string, name: string, namespace: string, kind: PodKind, options: PodOptions = {}): Pod {
  const annotations: Record<string, string> = {};
  if (kind === 'static') annotations[CONFIG_SOURCE_ANNOTATION_KEY] = FILE_SOURCE;
  if (kind === 'extra' || kind === 'mirror') annotations[CONFIG_SOURCE_ANNOTATION_KEY] = API_SERVER_SOURCE;
  if (kind === 'mirror') annotations[CONFIG_MIRROR_ANNOTATION_KEY] = options.mirrorValue ?? 'mirror';
  if (options.hash !== undefined) annotations[CONFIG_HASH_ANNOTATION_KEY] = options.hash;
  const pod: Pod = {
    metadata: { uid, name, namespace, ...(kind === 'plain' && options.hash === undefined ? {} : { annotations }) },
    spec: {
      containers: [{ name: 'c' }],
      ...(options.ephemeral
        ? {
            ephemeralContainers: Array.from({ length: options.ephemeral }, (_, i) => ({ name: `debug-${i}` })),
          }
        : {}),
    },
  };
  if (options.phase !== undefined) pod.status = { phase: options.phase };
  return pod;
}

export const ns = NAMESPACE_DEFAULT;

/** Asserts that two pod lists hold the same objects, ignoring order (Go map order is random). */
export function assertSamePods(actual: readonly Pod[], expected: readonly Pod[], message?: string): void {
  assert.equal(actual.length, expected.length, `${message ?? 'pods'}: length ${actual.length} ≠ ${expected.length}`);
  assert.deepEqual(new Set(actual), new Set(expected), message);
  // Same objects, not just equal ones: the manager stores what it is given.
  for (const pod of expected) assert.ok(actual.includes(pod), `${message ?? 'pods'}: missing ${pod.metadata?.uid}`);
}

export function assertSameStrings(actual: readonly string[], expected: readonly string[], message?: string): void {
  assert.deepEqual([...actual].sort(), [...expected].sort(), message);
}

/** The current value of `kubelet_managed_ephemeral_containers` in `registry`. */
export async function ephemeralGauge(registry: Registry): Promise<number> {
  const metrics = await registry.getMetricsAsJSON();
  const metric = metrics.find((m) => m.name === MANAGED_EPHEMERAL_CONTAINERS);
  assert.ok(metric, `${MANAGED_EPHEMERAL_CONTAINERS} is not registered`);
  const values = metric.values;
  assert.equal(values.length, 1, `${MANAGED_EPHEMERAL_CONTAINERS} should have exactly one series`);
  return values[0]!.value;
}
