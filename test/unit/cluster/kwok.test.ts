// The kwok launcher's own parts (test/helpers/kwok.ts): which Stage files a kustomization of
// kwok's module names, and the flags kwok runs with. Starting kwok itself needs its build and
// a control plane: the benchmark's quick run does that (bench/agent/kwok.bench.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hasErrorCode } from '../../../src/errors.js';
import { KWOK_FAST_STAGES, KWOK_KWOKCTL_DEFAULTS, KWOK_TOOL, kustomizationFiles, kwokArgs } from '../../helpers/kwok.js';

async function moduleWith(kustomization: string, body: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kp-kwok-module-'));
  await mkdir(join(root, kustomization), { recursive: true });
  await writeFile(join(root, kustomization, 'kustomization.yaml'), body);
  return root;
}

describe('kwok launcher', () => {
  it('builds kwok from its own module, pinned: the package of its command, no copy of its main', () => {
    assert.equal(KWOK_TOOL.buildPackage, 'sigs.k8s.io/kwok/cmd/kwok');
    assert.deepEqual([...KWOK_FAST_STAGES], ['kustomize/stage/node/fast', 'kustomize/stage/pod/fast']);
  });

  it("lists a kustomization's resources as absolute paths, in its order", async () => {
    const root = await moduleWith('kustomize/stage/pod/fast', 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- pod-ready.yaml\n- pod-complete.yaml\n- pod-delete.yaml\n');
    const dir = join(root, 'kustomize/stage/pod/fast');
    assert.deepEqual(await kustomizationFiles(root, 'kustomize/stage/pod/fast'), [join(dir, 'pod-ready.yaml'), join(dir, 'pod-complete.yaml'), join(dir, 'pod-delete.yaml')]);
  });

  it('refuses a kustomization without YAML resources, naming its file', async () => {
    for (const body of ['kind: Kustomization\n', 'resources: []\n', 'resources:\n- ../base\n']) {
      const root = await moduleWith('k', body);
      await assert.rejects(kustomizationFiles(root, 'k'), (err: unknown) => {
        assert.ok(hasErrorCode(err, 'KP_ERR_CLUSTER_KWOK_START'), String(err));
        assert.match((err as Error).message, /resources: expected a list of YAML files of Stages/);
        assert.ok((err as Error).message.includes(join(root, 'k', 'kustomization.yaml')));
        return true;
      });
    }
  });

  it('runs kwok on the given kubeconfig with every stage file, the annotated Nodes only, its server on loopback', () => {
    const args = kwokArgs('/tmp/admin.kubeconfig', ['/m/a.yaml', '/m/b.yaml'], 41234, ['-v=DEBUG']);
    assert.deepEqual(args, [
      '--kubeconfig=/tmp/admin.kubeconfig',
      '--config=/m/a.yaml',
      '--config=/m/b.yaml',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--server-address=127.0.0.1:41234',
      '-v=DEBUG',
    ]);
  });

  it("gives kwok kwokctl's default node Leases and their heartbeat stage when asked", () => {
    assert.deepEqual([...KWOK_KWOKCTL_DEFAULTS.stages], ['kustomize/stage/node/fast', 'kustomize/stage/node/heartbeat-with-lease', 'kustomize/stage/pod/fast']);
    const args = kwokArgs('/tmp/admin.kubeconfig', ['/m/a.yaml'], 41234, [], KWOK_KWOKCTL_DEFAULTS.nodeLeaseDurationSeconds);
    assert.ok(args.includes('--node-lease-duration-seconds=40'), args.join(' '));
    assert.ok(!kwokArgs('/tmp/admin.kubeconfig', ['/m/a.yaml'], 41234).some((a) => a.startsWith('--node-lease-duration-seconds')));
  });
});
