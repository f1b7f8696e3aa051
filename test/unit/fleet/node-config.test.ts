// A fleet node's configuration: its own fields (name, kubeconfig, manifest path and URL, max
// pods) over its template's, which every node of the template shares as its prototype. Reads,
// /configz and the CLI's view are those of a whole copy.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { loadAgentConfig, type AgentConfig } from '../../../src/config/agent-config.js';
import { kubeletConfigurationOf } from '../../../src/config/kubelet-configuration.js';
import { nodeConfigOf } from '../../../src/fleet/fleet.js';
import { sameHiddenClass } from '../v8-shapes.js';

it("reads as the copy it stands for, holds only the node's own fields, and shares the template's among nodes", async () => {
  const { config: base } = await loadAgentConfig({ hostnameOverride: 'fleet', port: '0', readOnlyPort: '0', healthzPort: '0' });
  const template: AgentConfig = Object.freeze({ ...base, maxPods: 30, syncFrequencyMs: 30_000, scenarios: [] });
  const own = (i: number) => ({ nodeName: `n-${i}`, kubeconfig: '/k/fleet.kubeconfig', staticPodPath: i === 1 ? '/m/1' : undefined, staticPodURL: undefined, maxPods: 20 + i });
  const one = nodeConfigOf(template, own(1));
  const two = nodeConfigOf(template, own(2));
  const copy: AgentConfig = { ...template, ...own(1) };

  for (const key of Object.keys(copy) as (keyof AgentConfig)[]) assert.deepEqual(one[key], copy[key], key);
  assert.deepEqual(kubeletConfigurationOf(one), kubeletConfigurationOf(copy), '/configz shows the same');
  assert.ok(Object.isFrozen(one));
  assert.throws(() => {
    (one as { nodeName: string }).nodeName = 'other';
  }, TypeError);

  // What each node pays for: five fields, not the template's forty-odd.
  assert.deepEqual(Object.keys(one).sort(), ['kubeconfig', 'maxPods', 'nodeName', 'staticPodPath', 'staticPodURL']);
  assert.equal(Object.getPrototypeOf(one), template);
  assert.equal(Object.getPrototypeOf(two), template);
  assert.ok(sameHiddenClass(one, two));
});
