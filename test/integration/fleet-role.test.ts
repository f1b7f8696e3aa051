// The fleet's ClusterRole (deploy/fleet/cluster-role.yaml) is minimal: the fleet runs with a
// ServiceAccount token bound to it (test/integration/fleet.test.ts shows it is sufficient), and
// here each rule is removed in turn and the fleet, run with that token, is refused (403) by the
// API server for what that rule allowed.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1PolicyRule } from '@kubernetes/client-node';
import { createFleet, type Fleet } from '../../src/fleet/fleet.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { issueFleetToken, readFleetClusterRole } from '../../src/fleet/fleet-identity.js';
import type { Logger } from '../../src/logger.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const cp = useControlPlane({ nodes: ['fleet-role-unused'] });
let running: Fleet | undefined;
after(async () => {
  await running?.stop();
});

/** A logger that keeps every record (fields and message) as one JSON line. */
function capture(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const make = (bindings: object): Logger => {
    const put = (obj: object, msg?: string): void => {
      lines.push(JSON.stringify({ ...bindings, ...obj, err: (obj as { err?: Error }).err?.message, msg }));
    };
    return { debug: put, info: put, warn: put, error: put, child: (b) => make({ ...bindings, ...b }) };
  };
  return { logger: make({}), lines };
}

const describeRule = (r: V1PolicyRule): string => `${(r.apiGroups ?? []).join(',') || 'core'} ${(r.resources ?? []).join(',')} ${(r.verbs ?? []).join(',')}`;

describe('the fleet ClusterRole is minimal', async () => {
  const role = await readFleetClusterRole();
  it('with every rule, two nodes converge and nothing is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleet-role-'));
    const ns = cp.namespace;
    await writeFile(join(dir, 'ok.yaml'), manifest('ok', ns));
    await writeFile(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c}]}\n');
    const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig'), role });
    const { logger, lines } = capture();
    const fleet = await createFleet({ config: resolveFleetConfig({ kubeconfig, readOnlyPort: 0, templates: [{ name: 'frall-{i}', count: 2, staticPodPath: dir }] }, {}), logger, shutdownTimeoutMs: 1000 });
    running = fleet;
    await fleet.start();
    try {
      await waitFor(async () => (await cp.adminApi.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length === 2, 'two Running mirrors', { timeoutMs: 30_000, intervalMs: 200 });
      await waitFor(async () => (await cp.adminApi.listNamespacedEvent({ namespace: 'default' })).items.some((e) => e.involvedObject?.name?.startsWith('frall-')), 'the rejected manifest recorded as an Event on its Node', { timeoutMs: 30_000, intervalMs: 200 });
      await fleet.agent('frall-0')!.eventsIdle();
      assert.deepEqual(lines.filter((l) => /"httpStatus":403|HTTP 403|Forbidden|forbidden/.test(l)), []);
    } finally {
      await fleet.stop();
      running = undefined;
    }
  });

  role.rules!.forEach((rule, i) => {
    it(`without "${describeRule(rule)}" the fleet is refused`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'fleet-role-'));
      const ns = cp.namespace;
      await writeFile(join(dir, 'ok.yaml'), manifest('ok', ns));
      // A rejected manifest makes an Event, so the events rule is exercised too.
      await writeFile(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c}]}\n');
      const reduced = { ...role, rules: role.rules!.filter((_, j) => j !== i) };
      const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig'), role: reduced });
      const { logger, lines } = capture();
      const fleet = await createFleet({
        config: resolveFleetConfig({ kubeconfig, readOnlyPort: 0, templates: [{ name: `fr${i}-{i}`, count: 2, staticPodPath: dir }] }, {}),
        logger,
        shutdownTimeoutMs: 1000,
      });
      running = fleet;
      await fleet.start();
      try {
        const forbidden = await waitFor(() => lines.find((l) => /"httpStatus":403|HTTP 403|Forbidden|forbidden/.test(l)), `a 403 without rule ${i}`, { timeoutMs: 30_000, intervalMs: 100 });
        assert.ok(forbidden);
      } finally {
        await fleet.stop();
        running = undefined;
      }
    });
  });
});
