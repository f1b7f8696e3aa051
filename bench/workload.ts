// The pods every pod manager benchmark runs on. bench/go/main.go builds the same set, in the same
// order, so the TS and Go figures are comparable: keep the two in step.

import type { Pod } from '../src/pod/types.js';

const SOURCE = 'kubernetes.io/config.source';
const MIRROR = 'kubernetes.io/config.mirror';
const HASH = 'kubernetes.io/config.hash';

export interface Workload {
  /** Load order: each static pod is followed by its mirror. */
  all: Pod[];
  nonMirror: Pod[];
  statics: Pod[];
  mirrors: Pod[];
  /** Full names of `nonMirror`, same order. */
  fullNames: string[];
  /** UIDs of `all` (mirror UIDs included), same order. */
  uids: string[];
}

function newPod(uid: string, name: string, namespace: string, annotations: Record<string, string>): Pod {
  return { metadata: { uid, name, namespace, annotations } };
}

/**
 * `size` non-mirror pods: every tenth one (i % 10 === 0) a static pod from the `file` source,
 * followed by its mirror; the others API pods spread over ten namespaces.
 */
export function buildWorkload(size: number): Workload {
  const w: Workload = { all: [], nonMirror: [], statics: [], mirrors: [], fullNames: [], uids: [] };
  for (let i = 0; i < size; i++) {
    if (i % 10 === 0) {
      const uid = `static-uid-${i}`;
      const name = `static-${i}`;
      const staticPod = newPod(uid, name, 'kube-system', { [SOURCE]: 'file', [HASH]: uid });
      const mirror = newPod(`mirror-uid-${i}`, name, 'kube-system', { [SOURCE]: 'api', [MIRROR]: uid });
      w.all.push(staticPod, mirror);
      w.nonMirror.push(staticPod);
      w.statics.push(staticPod);
      w.mirrors.push(mirror);
    } else {
      const pod = newPod(`api-uid-${i}`, `api-${i}`, `ns-${i % 10}`, { [SOURCE]: 'api' });
      w.all.push(pod);
      w.nonMirror.push(pod);
    }
  }
  for (const p of w.nonMirror) w.fullNames.push(`${p.metadata!.name}_${p.metadata!.namespace}`);
  for (const p of w.all) w.uids.push(p.metadata!.uid!);
  return w;
}
