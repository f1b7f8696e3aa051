// The static pod manifest the integration tests, the reliability suite and the agent
// benchmarks write: one container, labelled with its name; and the static pod object the
// integration tests hand to the mirror client and the status writer.
import {
  CONFIG_FIRST_SEEN_ANNOTATION_KEY,
  CONFIG_HASH_ANNOTATION_KEY,
  CONFIG_SOURCE_ANNOTATION_KEY,
} from '../../src/constants.js';
import type { Pod } from '../../src/pod/types.js';

/** What a manifest may add: a grace period, and annotations (e.g. the simulated stop time). */
export interface ManifestOptions {
  terminationGracePeriodSeconds?: number;
  annotations?: Readonly<Record<string, string>>;
}

export function podManifestYaml(name: string, namespace: string, image = 'nginx:1.27', options: ManifestOptions = {}): string {
  const annotations = Object.entries(options.annotations ?? {});
  const annotationLines = annotations.length === 0 ? '' : `  annotations:\n${annotations.map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`).join('')}`;
  const grace = options.terminationGracePeriodSeconds === undefined ? '' : `  terminationGracePeriodSeconds: ${options.terminationGracePeriodSeconds}\n`;
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
  labels:
    app: ${name}
${annotationLines}spec:
${grace}  containers:
  - name: main
    image: ${image}
`;
}

/** A static pod as the file source hands it over: UID = hash, source annotations, bound to `node`. */
export function staticPodObject(name: string, namespace: string, options: { hash: string; node: string; mutate?: (pod: Pod) => void }): Pod {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: options.hash,
      labels: { app: name },
      annotations: {
        [CONFIG_HASH_ANNOTATION_KEY]: options.hash,
        [CONFIG_SOURCE_ANNOTATION_KEY]: 'file',
        [CONFIG_FIRST_SEEN_ANNOTATION_KEY]: '2026-11-22T00:00:00.000000000Z',
      },
    },
    spec: {
      nodeName: options.node,
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
    },
    status: { phase: 'Pending' },
  };
  options.mutate?.(pod);
  return pod;
}
