// src/values/simple-yaml.ts reads the subset of YAML that kubeconfig and KubeletConfiguration
// files hold; whatever it reads must be what the yaml package's parse gives, and whatever it is
// not sure of it leaves (undefined). Judged against the yaml package on real files, edge cases
// and generated documents.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { parseSimpleYaml } from '../../../src/values/simple-yaml.js';

/** The yaml package's value, or 'error'. */
function reference(text: string): unknown {
  try {
    return parse(text);
  } catch {
    return 'error';
  }
}

function agrees(text: string, mustRead = false): void {
  const ours = parseSimpleYaml(text);
  if (ours === undefined) {
    assert.ok(!mustRead, `left to the yaml package, expected read:\n${text}`);
    return;
  }
  assert.deepEqual(ours.value, reference(text), `differs from the yaml package:\n${text}`);
}

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:46347
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmhyTTNNdGMyVnkK
users:
- name: "system:node:node-a"
  user:
    token: f50206c59398a3b6ffda38e1b3015734c0dc62958a0a985b
contexts:
- name: local
  context:
    cluster: local
    user: "system:node:node-a"
current-context: local
`;

// As kubectl config view and kubeadm write them: sequences indented, empty maps, nulls.
const KUBECTL_STYLE = `apiVersion: v1
clusters:
  - cluster:
      certificate-authority: /etc/kubernetes/pki/ca.crt
      server: https://10.0.0.1:6443
      insecure-skip-tls-verify: false
    name: kubernetes
contexts:
  - context:
      cluster: kubernetes
      namespace: default
      user: system:node:worker-1
    name: system:node:worker-1@kubernetes
current-context: system:node:worker-1@kubernetes
kind: Config
preferences: {}
users:
  - name: system:node:worker-1
    user:
      client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem
      client-key: /var/lib/kubelet/pki/kubelet-client-current.pem
`;

const KUBELET_CONFIG = `# written by kubeadm
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous:
    enabled: false
  webhook:
    cacheTTL: 0s
    enabled: true
  x509:
    clientCAFile: /etc/kubernetes/pki/ca.crt
cgroupDriver: systemd
clusterDNS:
- 10.96.0.10
clusterDomain: cluster.local
fileCheckFrequency: 20s
maxPods: 110
nodeStatusReportFrequency: 5m0s
nodeStatusUpdateFrequency: 10s
rotateCertificates: true
runtimeRequestTimeout: 0s
staticPodPath: /etc/kubernetes/manifests
streamingConnectionIdleTimeout: 0s
syncFrequency: 1m0s
kubeAPIQPS: 50
evictionHard:
  memory.available: 100Mi
  'nodefs.available': '10%'
featureGates: {}
tlsCipherSuites: []
`;

it('reads kubeconfig and KubeletConfiguration files as kubectl, kubeadm and the local control plane write them, as the yaml package does', () => {
  for (const text of [KUBECONFIG, KUBECTL_STYLE, KUBELET_CONFIG]) agrees(text, true);
  agrees(JSON.stringify(parse(KUBELET_CONFIG)), true);
  agrees(JSON.stringify(parse(KUBECONFIG), null, 2), true);
  agrees('', true);
  agrees('# only a comment\n', true);
});

it('leaves to the yaml package what it is not sure of, and never reads a value the package would not', () => {
  const left = [
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    'a: |\n  text\n',
    'a: >\n  text\n',
    'a: plain\n  continued\n',
    'a: [1, 2]\n',
    'a: {b: 1}\n',
    'a: "esc\\n"\n',
    'a: 1.5\n',
    'a: 1e3\n',
    'a: 0x1F\n',
    'a: 0o17\n',
    'a: 010\n',
    'a: .inf\n',
    'a: -.inf\n',
    'a: .nan\n',
    'a: 1\na: 2\n',
    '{"a": 1, "a": 2}',
    'a:\tb\n',
    'a: b # comment\n',
    'a: x\n---\nb: y\n',
    'just a scalar\n',
    '- - nested\n',
    '? complex\n: key\n',
    '<<: {a: 1}\n',
    'a: "unterminated\n',
    "a: 'it''s'\n",
    "a: 'it's'\n",
    'true: 1\n',
    '1: one\n',
    'a: 123456789012345678901234\n',
    'a:\n  b: 1\n   c: 2\n',
    'a: 1\n- b\n',
    '- a\n  b\n',
    '- a: 1\n  - b\n',
  ];
  for (const text of left) agrees(text);
  // The ones read must be read as the package reads them.
  assert.deepEqual(parseSimpleYaml("a: 'it''s'\n")?.value, { a: "it's" });
  assert.equal(parseSimpleYaml('a: 1.5\n'), undefined);
  assert.equal(parseSimpleYaml('a: 1\na: 2\n'), undefined);
  assert.equal(parseSimpleYaml('{"a": 1, "a": 2}'), undefined);
});

it('reads scalars as the core schema types them', () => {
  const cases = ['~', 'null', 'Null', 'NULL', '', 'true', 'True', 'FALSE', '0', '-0', '+7', '42', '-17', '20s', '1m0s', '10Mi', '100m', 'v1', '-foo', 'a,b', 'x=y', 'https://h:6443/p?q=1', '"quoted: yes"', "'single'", '{}', '[]', 'yes', 'no', 'on', '2026-11-27'];
  for (const v of cases) agrees(`k: ${v}\n`);
  for (const v of ['20s', '1m0s', '10Mi', '10.96.0.10', 'v1', 'true', '42', 'null', '"quoted: yes"', '{}', '[]', 'yes']) agrees(`k: ${v}\n`, true);
});

/** A deterministic generator (a linear congruential one) for the documents below. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ['local', 'system:node:n1', 'https://127.0.0.1:6443', 'true', 'null', '10s', '1.5', '0x10', 'a b', 'it\'s', 'x: y', '#x', '-dash', '', ' padded ', 'line\nbreak', 'ü', '@at', '* star', '- item', '[x]', '{x}', '010', '7', 'Yes'];

function value(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth > 3 || pick < 0.45) {
    const s = r();
    if (s < 0.6) return WORDS[Math.floor(r() * WORDS.length)];
    if (s < 0.75) return Math.floor(r() * 2000) - 1000;
    if (s < 0.85) return r() < 0.5;
    if (s < 0.9) return null;
    return r() < 0.5 ? {} : [];
  }
  if (pick < 0.7) return Array.from({ length: 1 + Math.floor(r() * 3) }, () => value(r, depth + 1));
  const obj: Record<string, unknown> = {};
  for (let i = 0; i < 1 + Math.floor(r() * 4); i++) obj[['name', 'server', 'user', 'cluster', 'a.b', 'x-y', 'k_1', 'true', '1'][Math.floor(r() * 9)]!] = value(r, depth + 1);
  return obj;
}

it('agrees with the yaml package on 3,000 generated documents, written by the package in its styles and as JSON', () => {
  const r = random(22);
  let read = 0;
  for (let i = 0; i < 3000; i++) {
    const doc = { root: value(r, 0) };
    const texts = [stringify(doc), stringify(doc, { indentSeq: false }), JSON.stringify(doc), JSON.stringify(doc, null, 2), stringify(doc, { defaultStringType: 'QUOTE_DOUBLE' }), stringify(doc, { defaultStringType: 'QUOTE_SINGLE' })];
    for (const text of texts) {
      agrees(text);
      if (parseSimpleYaml(text) !== undefined) read++;
    }
  }
  // Most are read (not all left to the package), so the comparison says something.
  assert.ok(read > 3000 * 6 * 0.5, `only ${read} of ${3000 * 6} read`);
});
