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
 *
 * The pods go through JSON once, as the agent gets them (parsed from the API server's
 * responses and from manifests), so that each string is one flat object of the pod's own: a
 * string built with `+` or a template is kept as a concatenation, which V8 turns into a
 * forwarding reference at its first use as a key and which then costs every later lookup one
 * object more. bench/go/main.go decodes its pods from JSON too.
 */
export function buildWorkload(size: number): Workload {
  const built: Pod[] = [];
  for (let i = 0; i < size; i++) {
    if (i % 10 === 0) {
      const uid = `static-uid-${i}`;
      const name = `static-${i}`;
      built.push(
        newPod(uid, name, 'kube-system', { [SOURCE]: 'file', [HASH]: uid }),
        newPod(`mirror-uid-${i}`, name, 'kube-system', { [SOURCE]: 'api', [MIRROR]: uid }),
      );
    } else {
      built.push(newPod(`api-uid-${i}`, `api-${i}`, `ns-${i % 10}`, { [SOURCE]: 'api' }));
    }
  }
  const all = JSON.parse(JSON.stringify(built)) as Pod[];
  const w: Workload = { all, nonMirror: [], statics: [], mirrors: [], fullNames: [], uids: [] };
  for (const p of all) {
    const annotations = p.metadata!.annotations!;
    if (annotations[MIRROR] !== undefined) {
      w.mirrors.push(p);
      continue;
    }
    w.nonMirror.push(p);
    if (annotations[SOURCE] === 'file') w.statics.push(p);
  }
  for (const p of w.nonMirror) w.fullNames.push(`${p.metadata!.name}_${p.metadata!.namespace}`);
  for (const p of all) w.uids.push(p.metadata!.uid!);
  return w;
}
