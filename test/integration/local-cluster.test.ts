// startLocalCluster and `kubelet-pods local-cluster` themselves: the ready line, the
// kubeconfigs, restart on the same data, clean stop, and a clear error when it cannot start.
// (No kubelet counterpart: this is the project's own test infrastructure.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { hasErrorCode } from '../../src/errors.js';
import { startLocalCluster } from '../../src/cluster/local-cluster.js';
import { coreApiFromFile } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';

const cliMain = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};


/** Starts `kubelet-pods <args>` and resolves its first stdout line (the ready line). */
function startCli(args: string[]): { child: ChildProcess; exited: Promise<number | null>; firstLine: Promise<string> } {
  const child = spawn(process.execPath, [cliMain, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the CLI exited (${code}) before its ready line`)));
  });
  return { child, exited, firstLine };
}

describe('local cluster', () => {
  it('restart keeps ports, data and credentials; dispose removes a temporary directory', async () => {
    const cluster = await startLocalCluster({ nodes: ['node-1'] });
    try {
      assert.match(cluster.server, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(existsSync(cluster.adminKubeconfig));
      assert.ok(existsSync(cluster.nodeKubeconfigs['node-1']!));
      const admin = coreApiFromFile(cluster.adminKubeconfig);
      await admin.createNamespace({ body: { metadata: { name: 'kept' } } });

      await cluster.restart();
      assert.equal(cluster.running, true);
      const ns = await admin.readNamespace({ name: 'kept' });
      assert.equal(ns.metadata?.name, 'kept', 'the same client reads data written before the restart');
    } finally {
      await cluster.dispose();
    }
    assert.equal(cluster.running, false);
    assert.equal(existsSync(cluster.dir), false);
    await assert.rejects(cluster.start(), (err: unknown) => hasErrorCode(err, 'KP_ERR_CLUSTER_STOPPED'));
  });

  it('stop, start and dispose leave no pipe open in this process (nothing keeps it alive)', async () => {
    const pipes = (): number => process.getActiveResourcesInfo().filter((r) => r === 'PipeWrap').length;
    const before = pipes();
    const cluster = await startLocalCluster({ nodes: ['node-1'] });
    assert.ok(pipes() > before, 'the running program is connected by pipes');
    await cluster.stop();
    await cluster.start();
    await cluster.dispose();
    await waitFor(() => pipes() === before, 'every pipe to the stopped program closed');
  });

  it('a program that exits before it is ready fails with its log tail', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-bad-cp-'));
    const fake = join(dir, 'fake-control-plane');
    await writeFile(fake, '#!/bin/sh\necho "etcd: cannot bind: address in use" >&2\nexit 3\n');
    await chmod(fake, 0o755);
    await assert.rejects(startLocalCluster({ dir, nodes: ['n'], binary: fake }), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CLUSTER_START'));
      assert.match(err.message, /exited with code 3 before it was ready/);
      assert.match(err.message, /etcd: cannot bind: address in use/);
      assert.match(err.message, /control-plane\.log/);
      return true;
    });
  });

  it('`kubelet-pods local-cluster` prints one ready line, serves the API and stops on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-cli-cp-'));
    const { child, exited, firstLine } = startCli(['local-cluster', '--dir', dir, '--nodes', 'node-1,node-2']);
    try {
      const first = await firstLine;
      const ready = JSON.parse(first) as { server: string; adminKubeconfig: string; nodeKubeconfigs: Record<string, string> };
      assert.equal(ready.adminKubeconfig, join(dir, 'admin.kubeconfig'));
      assert.deepEqual(ready.nodeKubeconfigs, { 'node-1': join(dir, 'node-1.kubeconfig'), 'node-2': join(dir, 'node-2.kubeconfig') });
      const list = await coreApiFromFile(ready.nodeKubeconfigs['node-2']!).listPodForAllNamespaces({
        fieldSelector: 'spec.nodeName=node-2',
      });
      assert.deepEqual(list.items, []);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    await waitFor(() => !existsSync(join(dir, 'etcd')), 'the etcd data to be removed (no --keep-data)');
    assert.ok(child.pid !== undefined && !alive(child.pid));
  });

  it('`kubelet-pods local-cluster --node-count 3 --fleet-token` mints three node credentials and a fleet token bound to the shipped role', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-cli-fleet-'));
    const { child, exited, firstLine } = startCli(['local-cluster', '--dir', dir, '--node-count', '3', '--node-name-prefix', 'sim-', '--fleet-token', join(dir, 'fleet.kubeconfig')]);
    try {
      const first = await firstLine;
      const ready = JSON.parse(first) as { nodeKubeconfigs: Record<string, string>; fleetKubeconfig: string };
      assert.deepEqual(Object.keys(ready.nodeKubeconfigs).sort(), ['sim-0', 'sim-1', 'sim-2']);
      assert.equal(ready.fleetKubeconfig, join(dir, 'fleet.kubeconfig'));
      // The fleet token may list pods on every node (the role), a node token may not create another's Node.
      const nodes = await coreApiFromFile(ready.fleetKubeconfig).listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' });
      assert.deepEqual(nodes.items, []);
      await assert.rejects(coreApiFromFile(ready.nodeKubeconfigs['sim-0']!).createNode({ body: { metadata: { name: 'sim-1' } } }), (err: { code?: number }) => err.code === 403);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});
