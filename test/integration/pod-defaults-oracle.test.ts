// Static pod defaulting against the kubelet's own decoder: manifests go through
// src/sources/decode.ts and, through bench/go's decode mode, through the steps the kubelet's
// sources take (the legacy scheme's universal decoder, then the conversion back to v1) of
// k8s.io/kubernetes v1.34.4, and the two pods must be equal field by field. The only
// tolerated differences are the empty-value rows of docs/kubelet-differences.md (KD-158 to
// KD-161), each with its normaliser below. Then: writing every default out in a manifest keeps
// its UID, and the list of Go defaulters src/sources/scheme-defaults.ts carries out is the
// one SetObjectDefaults_Pod calls in the module's sources.
//
// POD_DEFAULTS_RANDOM sets the number of random manifests (default 300);
// POD_DEFAULTS_SEED replays another set.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { parse, stringify } from 'yaml';

import type { Pod } from '../../src/pod/types.js';
import { decodeSinglePod } from '../../src/sources/decode.js';
import { parseManifestFile } from '../../src/sources/manifest.js';
import { GO_POD_DEFAULTERS } from '../../src/sources/scheme-defaults.js';
import { randomManifests } from '../differential/random-pods.js';
import { ensurePodManagerOracle, podManagerOracleSourceDir, PodManagerOracle } from '../helpers/pod-manager-oracle.js';

const execFileAsync = promisify(execFile);
const RANDOM = Number(process.env['POD_DEFAULTS_RANDOM'] ?? 300);
const SEED = Number(process.env['POD_DEFAULTS_SEED'] ?? 20261125);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Manifests that reach every defaulter at least once (the random ones reach the common ones). */
const CORPUS: Record<string, object> = {
  probes: pod({
    containers: [
      {
        name: 'c',
        image: 'registry.k8s.io/pause:3.10',
        livenessProbe: { httpGet: { port: 8080 } },
        readinessProbe: { grpc: { port: 9000 }, periodSeconds: 0 },
        startupProbe: { tcpSocket: { port: 80 }, failureThreshold: 30 },
        lifecycle: { postStart: { httpGet: { port: 80 } }, preStop: { httpGet: { path: '/stop', port: 80, scheme: 'HTTPS' } } },
      },
      { name: 'd', image: 'busybox', readinessProbe: { exec: { command: ['true'] }, timeoutSeconds: 5 } },
    ],
  }),
  'host-network': pod({
    hostNetwork: true,
    initContainers: [{ name: 'i', image: 'busybox:1.36', ports: [{ containerPort: 7070 }] }],
    containers: [{ name: 'c', image: 'nginx:1.27', ports: [{ containerPort: 8080 }, { containerPort: 8443, hostPort: 8443, protocol: 'UDP' }] }],
  }),
  env: pod({
    containers: [
      {
        name: 'c',
        image: 'busybox@sha256:0000000000000000000000000000000000000000000000000000000000000000',
        env: [
          { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
          { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
          { name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
          { name: 'MEM_BYTES', valueFrom: { resourceFieldRef: { resource: 'limits.memory' } } },
        ],
        resources: { limits: { memory: '64Mi' } },
      },
    ],
  }),
  volumes: pod({
    volumes: [
      { name: 'bare' },
      { name: 'host', hostPath: { path: '/var/log' } },
      { name: 'host-typed', hostPath: { path: '/etc', type: 'Directory' } },
      { name: 'secret', secret: { secretName: 's' } },
      { name: 'config', configMap: { name: 'cm', defaultMode: 256 } },
      { name: 'downward', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      {
        name: 'projected',
        projected: {
          sources: [
            { downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
            { serviceAccountToken: { path: 'token' } },
            { serviceAccountToken: { path: 'token2', expirationSeconds: 7200, audience: 'x' } },
          ],
        },
      },
      { name: 'iscsi', iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.2001-04.com.example:storage', lun: 0 } },
      { name: 'rbd', rbd: { monitors: ['10.0.0.2:6789'], image: 'img' } },
      { name: 'azure', azureDisk: { diskName: 'd', diskURI: 'https://example/d.vhd' } },
      { name: 'scaleio', scaleIO: { gateway: 'https://gw', system: 'sys', secretRef: { name: 's' } } },
      {
        name: 'scratch',
        ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1.5Gi' } } } } },
      },
      { name: 'sized', emptyDir: { sizeLimit: '1000Mi' } },
    ],
    containers: [{ name: 'c', image: 'busybox:latest', volumeMounts: [{ name: 'bare', mountPath: '/bare' }] }],
  }),
  quantities: pod({
    overhead: { cpu: '0.25', memory: '1000' },
    containers: [
      { name: 'a', image: 'busybox', resources: { limits: { cpu: 0.5, memory: '1Gi', 'example.com/gpu': 1 } } },
      { name: 'b', image: 'busybox', resources: { requests: { cpu: '100u', memory: '1.5Ki' }, limits: { cpu: '1E3' } } },
      { name: 'c', image: 'busybox', resources: { requests: { cpu: '2', 'ephemeral-storage': '1e3' } } },
    ],
  }),
  'pod-level': pod({
    resources: { limits: { cpu: '2', memory: '2Gi', 'hugepages-2Mi': '0' } },
    initContainers: [
      { name: 'sidecar', image: 'busybox', restartPolicy: 'Always', resources: { requests: { cpu: '100m', memory: '64Mi' } } },
      { name: 'setup', image: 'busybox', resources: { requests: { cpu: '1', memory: '32Mi' }, limits: { 'hugepages-2Mi': '4Mi' } } },
    ],
    containers: [
      { name: 'a', image: 'busybox', resources: { requests: { cpu: '250m', memory: '128Mi' } } },
      { name: 'b', image: 'busybox', resources: { requests: { cpu: '250m' }, limits: { 'hugepages-2Mi': '2Mi' } } },
    ],
  }),
  'pod-level-requests-only': pod({
    resources: { requests: { memory: '1Gi' } },
    containers: [{ name: 'a', image: 'busybox', resources: { limits: { 'hugepages-1Gi': '1Gi', cpu: '1' } } }],
  }),
  'spec-only-defaults': pod({
    dnsPolicy: 'Default',
    restartPolicy: 'OnFailure',
    terminationGracePeriodSeconds: 0,
    enableServiceLinks: false,
    containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'Never', terminationMessagePolicy: 'FallbackToLogsOnError' }],
  }),
};

function pod(spec: object): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec };
}

let oracle: PodManagerOracle | undefined;
before(async () => {
  oracle = new PodManagerOracle(await ensurePodManagerOracle(), 'decode');
});
after(async () => {
  await oracle?.close();
});

/** Ours: decoded and scheme-defaulted, without the static-pod defaults (no name suffix, no UID). */
function oursDecode(text: string): Pod {
  const outcome = decodeSinglePod(text, () => {});
  if (outcome.kind !== 'ok') throw new Error(`ours refused the manifest: ${outcome.kind === 'invalid' ? outcome.error.message : outcome.reason}`);
  return outcome.value;
}

async function theirsDecode(text: string): Promise<Json> {
  const answer = await oracle!.decode(text);
  if (answer.error !== undefined) throw new Error(`the kubelet's decoder refused the manifest: ${answer.error}`);
  return answer.pod as Json;
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What two decodings may differ in by decision (docs/kubelet-differences.md, KD-158 to
 * KD-161), made the same on both sides: null, `{}` and `[]` count as absent (Go writes
 * `resources: {}`, `status: {}` and `creationTimestamp: null`, and drops `add: []`), and a
 * resourceFieldRef's `divisor: "0"`, which Go writes when the manifest has none, too.
 */
function normalise(value: Json, path: string[] = []): Json | undefined {
  if (Array.isArray(value)) {
    const items = value.map((v, i) => normalise(v, [...path, String(i)])).filter((v): v is Json => v !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (isObject(value)) {
    const out: { [key: string]: Json } = {};
    for (const [k, v] of Object.entries(value)) {
      if (isGoDivisor(k, v, path)) continue;
      const n = normalise(v, [...path, k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return value === null ? undefined : value;
}

const isGoDivisor = (key: string, value: Json, path: readonly string[]): boolean => key === 'divisor' && value === '0' && path.at(-1) === 'resourceFieldRef';

/**
 * Every path where the two differ, with both values. A zero scalar (`""`, `0`, `false`) that
 * the manifest wrote and Go's decoding dropped is the other decided difference (KD-160).
 */
function differences(ours: Json | undefined, theirs: Json | undefined, path = ''): string[] {
  if (isObject(ours) && isObject(theirs)) {
    const keys = [...new Set([...Object.keys(ours), ...Object.keys(theirs)])].sort();
    return keys.flatMap((k) => differences(ours[k], theirs[k], `${path}.${k}`));
  }
  if (Array.isArray(ours) && Array.isArray(theirs) && ours.length === theirs.length) {
    return ours.flatMap((v, i) => differences(v, theirs[i], `${path}[${i}]`));
  }
  if (theirs === undefined && zeroOnly(ours)) return [];
  return JSON.stringify(ours) === JSON.stringify(theirs) ? [] : [`${path || '(pod)'}: ours ${JSON.stringify(ours)}, the kubelet's ${JSON.stringify(theirs)}`];
}

/** A zero scalar, or a mapping or list holding nothing else (`emptyDir: {medium: ""}`). */
function zeroOnly(v: Json | undefined): boolean {
  if (v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.every(zeroOnly);
  return isObject(v) && Object.values(v).every(zeroOnly);
}

function withoutEmptyLists(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutEmptyLists);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => !(Array.isArray(v) && v.length === 0)).map(([k, v]) => [k, withoutEmptyLists(v)]));
}

/**
 * The kubelet's decoded pod as a manifest that spells out every default: Go's output without
 * what Go writes for a struct that holds nothing (an empty `resources` or `status`, a null
 * creationTimestamp, a `divisor: "0"`), which is no default.
 */
function spelledOut(pod: Json, path: string[] = []): Json | undefined {
  if (Array.isArray(pod)) return pod.map((v, i) => spelledOut(v, [...path, String(i)]) ?? null);
  if (!isObject(pod)) return pod;
  const out: { [key: string]: Json } = {};
  for (const [k, v] of Object.entries(pod)) {
    if (v === null || isGoDivisor(k, v, path)) continue;
    if ((k === 'resources' || k === 'status') && isObject(v) && Object.keys(v).length === 0) continue;
    const n = spelledOut(v, [...path, k]);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

async function compare(name: string, text: string): Promise<string[]> {
  const ours = normalise(JSON.parse(JSON.stringify(oursDecode(text))) as Json);
  const theirs = normalise(await theirsDecode(text));
  return differences(ours, theirs).map((d) => `${name} ${d}`);
}

test('every defaulter of the corpus: ours decodes each manifest as the kubelet does', async () => {
  const found: string[] = [];
  for (const [name, manifest] of Object.entries(CORPUS)) found.push(...(await compare(name, stringify(manifest))));
  assert.deepEqual(found, []);
});

test(`random manifests (seed ${SEED}, ${RANDOM} pods): ours decodes each as the kubelet does`, async () => {
  const found: string[] = [];
  for (const m of randomManifests({ seed: SEED, count: RANDOM, namespace: 'defaults' })) found.push(...(await compare(m.file, m.text)));
  assert.deepEqual(found, [], `replay with POD_DEFAULTS_SEED=${SEED}`);
});

test('writing every default out in a manifest keeps its UID', async () => {
  const uid = (text: string): string => {
    const parsed = parseManifestFile(text, '/etc/kubernetes/manifests/pod.yaml', 'node-1');
    if ('error' in parsed) throw parsed.error;
    return parsed.pod.metadata?.uid ?? '';
  };
  const manifests = [...Object.entries(CORPUS).map(([name, m]) => ({ name, text: stringify(m) })), ...randomManifests({ seed: SEED, count: 40, namespace: 'defaults' }).map((m) => ({ name: m.file, text: m.text }))];
  let checked = 0;
  for (const { name, text } of manifests) {
    // Static pods may not reference API objects: those manifests are decoded above, not run.
    const before = parseManifestFile(text, '/etc/kubernetes/manifests/pod.yaml', 'node-1');
    if ('error' in before) continue;
    const defaulted = spelledOut(await theirsDecode(text)) as { [key: string]: Json };
    const written = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...defaulted });
    // Go's decoding drops an empty list the manifest wrote (KD-161), so the written-out pod is
    // compared with the manifest without them.
    const original = JSON.stringify(withoutEmptyLists(parse(text) as Json));
    assert.equal(uid(written), uid(original), `${name}: the UID changed when the kubelet's defaults were written out`);
    checked++;
  }
  assert.ok(checked >= 40, `only ${checked} manifests could be run as static pods`);
});

test("the Go defaulters ours carries out are exactly those SetObjectDefaults_Pod calls in the module's sources", async () => {
  const goMod = await readFile(join(podManagerOracleSourceDir(), 'go.mod'), 'utf8');
  const version = /k8s\.io\/kubernetes (v[\d.]+)/.exec(goMod)?.[1];
  assert.ok(version, 'bench/go/go.mod names the k8s.io/kubernetes version');
  const { stdout } = await execFileAsync('go', ['env', 'GOMODCACHE'], { cwd: podManagerOracleSourceDir() });
  const file = join(stdout.trim(), `k8s.io/kubernetes@${version}`, 'pkg/apis/core/v1/zz_generated.defaults.go');
  const source = await readFile(file, 'utf8');
  const start = source.indexOf('func SetObjectDefaults_Pod(');
  assert.ok(start >= 0, `SetObjectDefaults_Pod in ${file}`);
  const body = source.slice(start, source.indexOf('\n}\n', start));
  const called = new Set([...body.matchAll(/\b(SetDefaults_\w+)\(/g)].map((m) => m[1]!));
  // Defaults the generator writes inline: `if <path>.<Field> == "" {` or `== nil {`.
  const inline = new Set([...body.matchAll(/if [\w.[\]]+\.(\w+) == (?:""|nil|0) \{/g)].map((m) => m[1]!));
  assert.ok(called.size >= 10 && inline.size >= 5, `read ${called.size} defaulters and ${inline.size} inline defaults from ${file}`);
  assert.deepEqual([...new Set([...called, ...inline])].sort(), [...new Set(GO_POD_DEFAULTERS)].sort());
});
