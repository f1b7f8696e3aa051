// Bad input: a fast-check generator writes hundreds of broken or hostile manifests (invalid
// YAML, wrong kinds, missing names, invalid names, huge and binary files, deep nesting,
// duplicate names, symlink loops, directories, odd file names, API references) beside valid
// ones, half before the agent starts and half while it runs. The agent stays up, every valid
// pod keeps exactly one mirror, and each bad entry is reported in the log with its path.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { MAX_CONFIG_LENGTH } from '../../src/constants.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { LogCapture, stopsAfterAll, SCALE, convergeExactly, manifest, pick, podsOnNode, startAgent, tokensOf, type Expected } from './helpers.js';

const NODE = 'rel-bad';
const cp = useControlPlane({ nodes: [NODE] });
const logs = new LogCapture('bad-input');
const stops = stopsAfterAll();

type Bad = { kind: string; write: (path: string) => Promise<void> };

const VALID = pick(40, 100);
const BAD = pick(500, 2000);

function badGenerator(namespace: string, validNames: string[]): fc.Arbitrary<Bad> {
  const text = (kind: string, arb: fc.Arbitrary<string>): fc.Arbitrary<Bad> => arb.map((t) => ({ kind, write: (p: string) => writeFile(p, t) }));
  const podDoc = (meta: string, spec = 'spec:\n  containers:\n  - name: c\n    image: nginx:1.27\n'): string =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n${meta}${spec}`;
  return fc.oneof(
    text('invalid-yaml', fc.string({ maxLength: 200 }).map((s) => `metadata: [unclosed, ${JSON.stringify(s)}\n  : : {`)),
    text('wrong-kind', fc.constantFrom('Deployment', 'Service', 'ConfigMap', 'Secret', 'Node', 'Namespace', 'PodTemplate', 'pod', 'POD', '').map((k) => `apiVersion: v1\nkind: ${JSON.stringify(k)}\nmetadata:\n  name: x\n  namespace: ${namespace}\n`)),
    text('wrong-apiVersion', fc.constantFrom('apps/v1', 'v2', 'v1beta1', 'nonsense/v1').map((v) => `apiVersion: ${v}\nkind: Pod\nmetadata:\n  name: wrong-api\n  namespace: ${namespace}\nspec:\n  containers:\n  - name: c\n    image: i\n`)),
    text('missing-name', fc.constant(podDoc(`  namespace: ${namespace}\n`))),
    text('invalid-name', fc.stringMatching(/^[A-Z_!@#$%^&*()+=. ]{1,20}$/).map((n) => podDoc(`  name: ${JSON.stringify(n)}\n  namespace: ${namespace}\n`))),
    text('no-containers', fc.constant(podDoc(`  name: empty-spec\n  namespace: ${namespace}\n`, 'spec: {}\n'))),
    text('api-reference', fc.constant(podDoc(`  name: uses-secret\n  namespace: ${namespace}\n`, 'spec:\n  containers:\n  - name: c\n    image: i\n    envFrom:\n    - secretRef:\n        name: s\n'))),
    text('scalar', fc.constantFrom('42', 'null', '"a string"', '[]', '{}', '~', 'true')),
    text('deep-nesting', fc.integer({ min: 2_000, max: 20_000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`)),
    text('deep-nesting-yaml', fc.integer({ min: 200, max: 2_000 }).map((d) => `apiVersion: v1\nkind: Pod\nmetadata:\n  name: deep\n  labels: ${'{a: '.repeat(d)}1${'}'.repeat(d)}\n`)),
    text('duplicate-name', fc.constantFrom(...validNames).map((n) => manifest(n, namespace, 'nginx:9.99'))),
    fc.uint8Array({ minLength: 1, maxLength: 4096 }).map((b) => ({ kind: 'binary', write: (p: string) => writeFile(p, Buffer.concat([Buffer.from([0, 0xff, 0xfe]), Buffer.from(b)])) })),
    fc.constant({ kind: 'symlink-loop', write: async (p: string) => symlink(`${p}`, p) }),
    fc.constant({ kind: 'dangling-symlink', write: async (p: string) => symlink(`${p}.nowhere`, p) }),
    fc.constant({ kind: 'directory', write: async (p: string) => mkdir(p) }),
  );
}

it(`bad input (${SCALE}): ${BAD} bad entries beside ${VALID} valid manifests`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-bad-'));
  const validNames = Array.from({ length: VALID }, (_, i) => `valid-${i}`);
  for (const n of validNames) await writeFile(join(dir, `${n}.yaml`), manifest(n, cp.namespace, 'nginx:1.27'));
  const seed = Number(process.env.RELIABILITY_SEED) || Date.now() % 2 ** 31;
  const bads = fc.sample(badGenerator(cp.namespace, validNames), { numRuns: BAD, seed });
  // Odd characters in file names: spaces, unicode, quotes, newlines, very long names. Every
  // bad file sorts after "valid-" so a duplicate never displaces the valid pod.
  const oddName = (i: number): string => {
    const odd = [' space', '\u00e9t\u00e9', '\u4e2d\u6587', "quo'te", 'new\nline', 'tab\there', '%s%n', '$(rm -rf)', 'x'.repeat(200), '\u{1F600}'];
    return `zz-bad-${i}-${odd[i % odd.length]}.yaml`;
  };
  const badPaths = new Map<string, string>();
  // Three huge files (one byte over the limit), not generated: they cost 10 MiB each.
  const huge = Buffer.alloc(MAX_CONFIG_LENGTH + 1, 'a');
  for (let i = 0; i < 3; i++) {
    const p = join(dir, `zz-huge-${i}.yaml`);
    await writeFile(p, huge);
    badPaths.set(p, 'huge');
  }
  const half = Math.floor(bads.length / 2);
  for (let i = 0; i < half; i++) {
    const p = join(dir, oddName(i));
    await bads[i]!.write(p);
    badPaths.set(p, bads[i]!.kind);
  }

  const agent = await startAgent({
    kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!,
    node: NODE,
    flags: ['--pod-manifest-path', dir],
    logger: logs.logger('agent'),
  });
  stops.push(() => agent.stop());
  const expected: Expected[] = validNames.map((n) => ({ name: `${n}-${NODE}`, namespace: cp.namespace, image: 'nginx:1.27' }));
  const firstMs = await convergeExactly(cp.adminApi, NODE, expected, 120_000);

  // The second half arrives while the agent runs (through the watch).
  for (let i = half; i < bads.length; i++) {
    const p = join(dir, oddName(i));
    await bads[i]!.write(p);
    badPaths.set(p, bads[i]!.kind);
  }
  // A valid manifest written after all of that still gets its mirror: the agent is up.
  await writeFile(join(dir, 'valid-late.yaml'), manifest('valid-late', cp.namespace, 'nginx:1.27'));
  expected.push({ name: `valid-late-${NODE}`, namespace: cp.namespace, image: 'nginx:1.27' });
  const secondMs = await convergeExactly(cp.adminApi, NODE, expected, 120_000);

  // Every bad entry is named by path in some log line (entries the watch cannot judge, such as
  // a new directory or a symlink loop, are reported by the next periodic re-list: 20 s).
  const reportedPaths = (): Set<string> => {
    const s = new Set<string>();
    for (const r of logs.records()) if (typeof r.path === 'string') s.add(r.path);
    return s;
  };
  const unreported = await waitFor(
    async () => {
      await logs.flush();
      const seen = reportedPaths();
      const missing = [...badPaths.keys()].filter((p) => !seen.has(p));
      return missing.length === 0 ? [] : undefined;
    },
    'every bad entry reported with its path',
    { timeoutMs: 60_000, intervalMs: 500 },
  ).catch(() => {
    const seen = reportedPaths();
    return [...badPaths.entries()].filter(([p]) => !seen.has(p)).map(([p, k]) => `${k}: ${JSON.stringify(p)}`);
  });
  assert.deepEqual(unreported, [], 'bad entries never reported');
  assert.equal(agent.podManager.getPods().length, VALID + 1, 'exactly the valid static pods are in the pod manager');
  assert.ok(agent.allSourcesReady());

  const kinds = new Map<string, number>();
  for (const k of badPaths.values()) kinds.set(k, (kinds.get(k) ?? 0) + 1);
  const mirrors = (await podsOnNode(cp.adminApi, NODE)).length;
  t.diagnostic(
    `seed ${seed}: ${badPaths.size} bad entries (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}), ${VALID + 1} valid; ` +
      `${mirrors} mirrors, 0 lost; converged in ${Math.round(firstMs)} ms at start and ${Math.round(secondMs)} ms after the second wave; all ${badPaths.size} reported by path`,
  );
  await agent.stop();
  const lines = await logs.assertNoSecrets(tokensOf([cp.cluster.nodeKubeconfigs[NODE]!, cp.cluster.adminKubeconfig]));
  t.diagnostic(`log scan: ${lines} lines, no token`);
});
