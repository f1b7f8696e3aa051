// Mirrors pkg/kubelet/config/common_test.go (CS-*), plus UID, YAML and API-reference checks.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { stringify } from 'yaml';
import { hasErrorCode } from '../../../src/errors.js';
import type { Pod } from '../../../src/pod/types.js';
import { canonicalJSON } from '../../../src/values/canonical-json.js';
import { decodePodList, decodeSinglePod, parseManifestText } from '../../../src/sources/decode.js';
import { applyStaticPodDefaults, generatePodName } from '../../../src/sources/defaults.js';
import { defaultPullPolicy } from '../../../src/sources/scheme-defaults.js';
import { parseManifestFile } from '../../../src/sources/manifest.js';
import { checkStaticPodReferences, findApiReferences } from '../../../src/sources/static-pod-rules.js';
import { computeStaticPodUID } from '../../../src/sources/uid.js';
import { isDNS1123Subdomain } from '../../../src/values/dns-name.js';

const noDefaults = (): void => {};

/** The reference pod of the kubelet's common tests ("P0"): decoded as it is, with no defaults to add. */
function p0(): Pod {
  return {
    metadata: { name: 'test', uid: '12345', namespace: 'mynamespace' },
    spec: {
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: 'image',
          image: 'test/image',
          imagePullPolicy: 'IfNotPresent',
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          securityContext: { capabilities: {}, privileged: false, procMount: 'Default' },
        },
      ],
      securityContext: {},
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
    },
    status: { podIP: '1.2.3.4', podIPs: [{ ip: '1.2.3.4' }] },
  };
}

const withTypeMeta = (pod: Pod): object => ({ apiVersion: 'v1', kind: 'Pod', ...pod });

function expectOk<T>(outcome: ReturnType<typeof decodeSinglePod> | ReturnType<typeof decodePodList>): T {
  if (outcome.kind !== 'ok') {
    assert.fail(`expected ok, got ${outcome.kind}: ${'reason' in outcome ? outcome.reason : outcome.error.message}`);
  }
  return outcome.value as T;
}

describe('CS common', () => {
  for (const [format, encode] of [
    ['json', (v: object) => JSON.stringify(v)],
    ['yaml', (v: object) => stringify(v)],
  ] as const) {
    test(`CS-1 TestDecodeSinglePod/${format}`, () => {
      const pod = expectOk<Pod>(decodeSinglePod(encode(withTypeMeta(p0())), noDefaults));
      assert.deepEqual(pod, p0());
    });

    test(`CS-3 TestDecodePodList/${format}`, () => {
      const list = { apiVersion: 'v1', kind: 'PodList', items: [p0()] };
      const pods = expectOk<Pod[]>(decodePodList(encode(list), noDefaults));
      assert.deepEqual(pods, [p0()]);
    });
  }

  test('CS-2 TestDecodeSinglePodRejectsClusterTrustBundleVolumes', () => {
    const pod = p0();
    pod.spec!.volumes = [
      { name: 'ctb-volume', projected: { sources: [{ clusterTrustBundle: { name: 'my-ctb', path: 'ctb-file' } }] } },
    ];
    pod.spec!.containers[0]!.volumeMounts = [{ name: 'ctb-volume', mountPath: '/var/run/ctb-volume' }];
    const outcome = decodeSinglePod(JSON.stringify(withTypeMeta(pod)), noDefaults);
    assert.equal(outcome.kind, 'invalid');
    assert.ok(outcome.kind === 'invalid' && hasErrorCode(outcome.error, 'KP_ERR_SOURCE_CLUSTER_TRUST_BUNDLE'));
    assert.equal(outcome.kind === 'invalid' && outcome.error.message, 'static pods may not use ClusterTrustBundle projected volume sources');
  });

  const nameCases = [
    { desc: 'node1', node: 'node1', name: 'static-pod1', expected: 'static-pod1-node1', validated: 'static-pod1', invalid: false },
    { desc: 'Node1', node: 'Node1', name: 'static-pod1', expected: 'static-pod1-node1', validated: 'static-pod1', invalid: false },
    { desc: 'NODE1', node: 'NODE1', name: 'static-pod1', expected: 'static-pod1-node1', validated: 'static-pod1-NODE1', invalid: true },
  ];
  for (const c of nameCases) {
    test(`CS-4 TestStaticPodNameGenerate/${c.desc}`, () => {
      assert.equal(generatePodName(c.name, c.node), c.expected);
      assert.equal(!isDNS1123Subdomain(c.validated), c.invalid);
    });
  }
});

describe('decoding details', () => {
  const base = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } };

  test('a manifest without a name is rejected as "name is needed for the pod"', () => {
    const outcome = decodeSinglePod(JSON.stringify({ ...base, metadata: {} }), noDefaults);
    assert.equal(outcome.kind, 'invalid');
    assert.equal(outcome.kind === 'invalid' && outcome.error.message, 'invalid pod: name is needed for the pod');
  });

  test('missing kind or apiVersion, another kind, or another version is "not a pod"', () => {
    for (const [desc, raw, reason] of [
      ['no kind', { ...base, kind: undefined }, "Object 'Kind' is missing"],
      ['no apiVersion', { ...base, apiVersion: undefined }, "Object 'apiVersion' is missing"],
      ['a service', { ...base, kind: 'Service' }, 'invalid pod: Service'],
      ['v1betta2', { ...base, apiVersion: 'v1betta2' }, 'no kind "Pod" is registered for version "v1betta2"'],
    ] as const) {
      const outcome = decodeSinglePod(JSON.stringify(raw), noDefaults);
      assert.equal(outcome.kind, 'not-pod', desc);
      assert.equal(outcome.kind === 'not-pod' && outcome.reason, reason, desc);
    }
  });

  test('a file holding a PodList is not a pod', () => {
    const outcome = parseManifestFile(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [] }), '/m/list.json', 'n');
    assert.ok('error' in outcome && hasErrorCode(outcome.error, 'KP_ERR_SOURCE_DECODE'));
    assert.match('error' in outcome ? outcome.error.message : '', /^\/m\/list\.json: couldn't parse as pod \(invalid pod: PodList\)/);
  });

  test('a field of the wrong type fails decoding; a missing required field fails validation', () => {
    const wrongType = decodeSinglePod(JSON.stringify({ ...base, metadata: { name: 'web', labels: { a: 1 } } }), noDefaults);
    assert.equal(wrongType.kind, 'not-pod');
    assert.match(wrongType.kind === 'not-pod' ? wrongType.reason : '', /metadata\.labels\.a: must be string/);
    const noContainers = decodeSinglePod(JSON.stringify({ ...base, spec: {} }), noDefaults);
    assert.equal(noContainers.kind, 'invalid');
    assert.match(noContainers.kind === 'invalid' ? noContainers.error.message : '', /^invalid pod: \[spec\.containers: Required value/);
  });

  test('scheduling gates together with nodeName, duplicate volumes and ephemeral containers are invalid', () => {
    const gated = parseManifestFile(JSON.stringify({ ...base, spec: { ...base.spec, schedulingGates: [{ name: 'g' }] } }), '/m/a', 'n');
    assert.match('error' in gated ? gated.error.message : '', /spec\.nodeName: Forbidden/);
    const ephemeral = decodeSinglePod(
      JSON.stringify({ ...base, spec: { ...base.spec, ephemeralContainers: [{ name: 'e', image: 'busybox' }] } }),
      noDefaults,
    );
    assert.match(ephemeral.kind === 'invalid' ? ephemeral.error.message : '', /spec\.ephemeralContainers: Forbidden/);
  });

  test('a suffixed name longer than 253 characters is invalid', () => {
    const name = 'a'.repeat(250);
    const outcome = parseManifestFile(JSON.stringify({ ...base, metadata: { name } }), '/m/a', 'node1');
    assert.match('error' in outcome ? outcome.error.message : '', /metadata\.name: Invalid value/);
    const ok = parseManifestFile(JSON.stringify({ ...base, metadata: { name: 'a'.repeat(247) } }), '/m/a', 'node1');
    assert.ok('pod' in ok);
  });

  test('YAML 1.1: yes/no are booleans, only the first document counts, duplicate keys: last wins', () => {
    const text = 'a: yes\nb: off\nc: 1\nc: 2\nd: 2001-12-14\n---\nsecond: true\n';
    const parsed = parseManifestText(text);
    assert.deepEqual(parsed, { ok: true, value: { a: true, b: false, c: 2, d: '2001-12-14' } });
    const json = parseManifestText('{"c": 1, "c": 2}');
    assert.deepEqual(json, { ok: true, value: { c: 2 } });
    assert.equal(decodeSinglePod(Buffer.from([1, 2, 3]), noDefaults).kind, 'not-pod');
    assert.equal(parseManifestText(Buffer.from([0xff, 0xfe])).ok, false, 'invalid UTF-8');
  });

  test('scheme defaults: pull policy from the tag, port protocol, nothing else added', () => {
    assert.equal(defaultPullPolicy('nginx'), 'Always');
    assert.equal(defaultPullPolicy('nginx:latest'), 'Always');
    assert.equal(defaultPullPolicy('registry:5000/nginx'), 'Always');
    assert.equal(defaultPullPolicy('registry:5000/nginx:1.2'), 'IfNotPresent');
    assert.equal(defaultPullPolicy('nginx@sha256:abc'), 'IfNotPresent');
    const pod = expectOk<Pod>(
      decodeSinglePod(
        JSON.stringify({ ...base, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] } }),
        noDefaults,
      ),
    );
    assert.deepEqual(pod.spec, {
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
      securityContext: {},
      containers: [
        {
          name: 'c',
          image: 'nginx',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          imagePullPolicy: 'Always',
        },
      ],
    });
  });
});

describe('static defaults and UID', () => {
  const manifestYAML = [
    '# the web server',
    'apiVersion: v1',
    'kind: Pod',
    'metadata:',
    '  name: web',
    '  labels: {app: web}',
    'spec:',
    '  containers:',
    '  - name: c',
    '    image: nginx:1.25',
    '',
  ].join('\n');
  const manifestJSON = JSON.stringify({
    spec: { containers: [{ image: 'nginx:1.25', name: 'c' }] },
    metadata: { labels: { app: 'web' }, name: 'web' },
    kind: 'Pod',
    apiVersion: 'v1',
  });
  const podOf = (text: string, path = '/etc/kubernetes/manifests/web.yaml', node = 'Node-1'): Pod => {
    const outcome = parseManifestFile(text, path, node);
    if (!('pod' in outcome)) assert.fail(outcome.error.message);
    return outcome.pod;
  };

  test('file defaults: suffixed name, default namespace, nodeName, hash = UID, one toleration, Pending', () => {
    const pod = podOf(manifestYAML);
    assert.equal(pod.metadata?.name, 'web-node-1');
    assert.equal(pod.metadata?.namespace, 'default');
    assert.equal(pod.spec?.nodeName, 'Node-1');
    assert.match(pod.metadata?.uid ?? '', /^[0-9a-f]{32}$/);
    assert.deepEqual(pod.metadata?.annotations, { 'kubernetes.io/config.hash': pod.metadata?.uid });
    assert.deepEqual(pod.spec?.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]);
    assert.equal(pod.status?.phase, 'Pending');
  });

  test('a matching toleration is replaced (its tolerationSeconds dropped), others are kept', () => {
    const pod: Pod = {
      metadata: { name: 'a' },
      spec: {
        containers: [],
        tolerations: [
          { key: 'k', operator: 'Exists', effect: 'NoSchedule' },
          { operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
        ],
      },
    };
    applyStaticPodDefaults(pod, { source: '/m/a', isFile: true, nodeName: 'n' });
    assert.deepEqual(pod.spec?.tolerations, [
      { key: 'k', operator: 'Exists', effect: 'NoSchedule' },
      { operator: 'Exists', effect: 'NoExecute' },
    ]);
  });

  test('a manifest-supplied UID is kept and becomes config.hash', () => {
    const pod = podOf(JSON.stringify({ ...JSON.parse(manifestJSON), metadata: { name: 'web', uid: 'fixed-uid' } }));
    assert.equal(pod.metadata?.uid, 'fixed-uid');
    assert.equal(pod.metadata?.annotations?.['kubernetes.io/config.hash'], 'fixed-uid');
  });

  test('UID is stable under reformatting: YAML vs JSON, key order, comments, explicit defaults', () => {
    const uid = podOf(manifestYAML).metadata?.uid;
    assert.equal(podOf(manifestJSON).metadata?.uid, uid);
    assert.equal(podOf(`\n\n${manifestYAML}# trailing comment\n`).metadata?.uid, uid);
    const explicit = manifestYAML.replace('image: nginx:1.25', 'image: nginx:1.25\n    imagePullPolicy: IfNotPresent\n    terminationMessagePolicy: File');
    assert.equal(podOf(explicit).metadata?.uid, uid);
    assert.equal(podOf(manifestYAML).metadata?.uid, uid, 'same bytes, same UID on every parse');
  });

  test('UID changes with a label, the node, the path, and between file and HTTP', () => {
    const uid = podOf(manifestYAML).metadata?.uid;
    const uids = new Set([
      uid,
      podOf(manifestYAML.replace('app: web', 'app: web2')).metadata?.uid,
      podOf(manifestYAML, undefined, 'node-2').metadata?.uid,
      podOf(manifestYAML, '/etc/kubernetes/manifests/other.yaml').metadata?.uid,
    ]);
    assert.equal(uids.size, 4);
    const raw = JSON.parse(manifestJSON) as Pod;
    delete (raw as Record<string, unknown>).apiVersion;
    delete (raw as Record<string, unknown>).kind;
    assert.notEqual(computeStaticPodUID(raw, { url: 'http://x/m' }), computeStaticPodUID(raw, { file: 'http://x/m', nodeName: '' }));
  });

  test('UID values are pinned (canonical JSON + salt, MD5)', () => {
    const minimal: Pod = { metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    assert.equal(
      canonicalJSON(minimal, { dropZeroValues: true }),
      '{"metadata":{"name":"a"},"spec":{"containers":[{"image":"i","name":"c"}]}}',
    );
    assert.equal(computeStaticPodUID(minimal, { file: '/etc/kubernetes/manifests/a.yaml', nodeName: 'node-1' }), UID_FILE);
    assert.equal(computeStaticPodUID(minimal, { url: 'http://127.0.0.1:8080/manifests' }), UID_URL);
    assert.equal(podOf(manifestYAML).metadata?.uid, UID_MANIFEST);
  });
});

const UID_FILE = '425e53b07c39c9222eccbdfe834bd015';
const UID_URL = '47fd7befdcaa25d8c91f10b0de92f131';
const UID_MANIFEST = 'ae0e5cc9bb153f73c5e691ec21ed6788';

describe('API-reference rejection', () => {
  const pod = (spec: Record<string, unknown>): Pod =>
    ({ metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } }) as Pod;

  test('a secret volume is rejected with the file and the reference named', () => {
    const err = checkStaticPodReferences(pod({ volumes: [{ name: 'v', secret: { secretName: 'db-pass' } }] }), '/etc/m/a.yaml');
    assert.ok(err && hasErrorCode(err, 'KP_ERR_SOURCE_API_REFERENCE'));
    assert.equal(err.message, 'static pod from "/etc/m/a.yaml" references secret "db-pass" (spec.volumes[0].secret)');
  });

  test('every kind of reference is found, in all container kinds', () => {
    const refs = findApiReferences(
      pod({
        serviceAccountName: 'sa',
        imagePullSecrets: [{ name: 'pull' }],
        volumes: [
          { name: 'v0', configMap: { name: 'cm' } },
          { name: 'v1', persistentVolumeClaim: { claimName: 'claim' } },
          {
            name: 'v2',
            projected: {
              sources: [
                { secret: { name: 'ps' } },
                { configMap: { name: 'pcm' } },
                { serviceAccountToken: { path: 'token' } },
                { clusterTrustBundle: { signerName: 'example.com/s', path: 'b' } },
              ],
            },
          },
          { name: 'v3', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi-secret' } } },
        ],
        initContainers: [{ name: 'i', image: 'i', envFrom: [{ secretRef: { name: 'env-secret' } }] }],
        containers: [
          {
            name: 'c',
            image: 'i',
            env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'env-cm', key: 'k' } } }],
            envFrom: [{ configMapRef: { name: 'envfrom-cm' } }],
          },
        ],
        ephemeralContainers: [{ name: 'e', image: 'i', env: [{ name: 'Y', valueFrom: { secretKeyRef: { name: 'eph', key: 'k' } } }] }],
      }),
    );
    assert.deepEqual(
      refs.map((r) => `${r.resource}/${r.name}@${r.field}`),
      [
        'serviceaccount/sa@spec.serviceAccountName',
        'secret/pull@spec.imagePullSecrets[0]',
        'configmap/cm@spec.volumes[0].configMap',
        'persistentvolumeclaim/claim@spec.volumes[1].persistentVolumeClaim',
        'secret/ps@spec.volumes[2].projected.sources[0].secret',
        'configmap/pcm@spec.volumes[2].projected.sources[1].configMap',
        'serviceaccount token/token@spec.volumes[2].projected.sources[2].serviceAccountToken',
        'clustertrustbundle/example.com/s@spec.volumes[2].projected.sources[3].clusterTrustBundle',
        'secret/csi-secret@spec.volumes[3].csi.nodePublishSecretRef',
        'secret/env-secret@spec.initContainers[0].envFrom[0].secretRef',
        'configmap/env-cm@spec.containers[0].env[0].valueFrom.configMapKeyRef',
        'configmap/envfrom-cm@spec.containers[0].envFrom[0].configMapRef',
        'secret/eph@spec.ephemeralContainers[0].env[0].valueFrom.secretKeyRef',
      ],
    );
  });

  test('a manifest file with a serviceAccountName is refused by the file parser; a plain one is not', () => {
    const manifest = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    assert.ok('pod' in parseManifestFile(JSON.stringify(manifest), '/m/a', 'n'));
    const refused = parseManifestFile(JSON.stringify({ ...manifest, spec: { ...manifest.spec, serviceAccountName: 'x' } }), '/m/a', 'n');
    assert.equal('error' in refused && refused.error.message, 'static pod from "/m/a" references serviceaccount "x" (spec.serviceAccountName)');
  });
});
