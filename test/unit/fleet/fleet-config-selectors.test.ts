// Selector templates in the fleet file and flags (src/fleet/fleet-config.ts): a template that
// adopts the Nodes others create instead of naming its own, checked with the field named.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasErrorCode } from '../../../src/errors.js';
import { fleetFlags } from '../../../src/cli/fleet-command.js';
import { isSelectorTemplate, resolveFleetConfig, templateNodeNames } from '../../../src/fleet/fleet-config.js';

const refused = (raw: unknown, field: RegExp, flags = {}): void => {
  assert.throws(
    () => resolveFleetConfig(raw, flags),
    (err: unknown) => hasErrorCode(err, 'KP_ERR_FLEET_CONFIG') && field.test(err.message),
  );
};

describe('fleet configuration: selector templates', () => {
  it('a selector template names no node and keeps its parsed selectors beside the named templates', () => {
    const config = resolveFleetConfig(
      {
        kubeconfig: '/k',
        templates: [
          { name: 'sim-{i}', count: 2 },
          { annotationSelector: 'kwok.x-k8s.io/node=fake', labelSelector: 'type in (kwok,sim)', staticPodPath: '/m', capacity: { cpu: '4' } },
        ],
      },
      {},
    );
    assert.deepEqual(config.nodes.map((n) => n.name), ['sim-0', 'sim-1']);
    const tpl = config.templates[1]!;
    assert.equal(isSelectorTemplate(tpl), true);
    assert.equal(isSelectorTemplate(config.templates[0]!), false);
    assert.equal(tpl.count, 0);
    assert.equal(tpl.annotationSelector?.matches({ 'kwok.x-k8s.io/node': 'fake' }), true);
    assert.equal(tpl.labelSelector?.matches({ type: 'sim' }), true);
    assert.equal(tpl.labelSelector?.matches({ type: 'real' }), false);
    assert.equal(tpl.staticPodPath, '/m');
    assert.deepEqual([...templateNodeNames(config.templates)], ['sim-0', 'sim-1']);
  });

  it('a fleet of selector templates only is valid', () => {
    const config = resolveFleetConfig({ kubeconfig: '/k', templates: [{ labelSelector: 'pool=auto' }] }, {});
    assert.equal(config.nodes.length, 0);
    assert.equal(config.templates.length, 1);
  });

  it('the flags add one selector template, with the manifest flags, beside --nodes', () => {
    const flags = fleetFlags(['--nodes', '2', '--kubeconfig', '/k', '--manage-nodes-with-annotation-selector', 'kwok.x-k8s.io/node=fake', '--pod-manifest-path', '/m']);
    const config = resolveFleetConfig({}, flags);
    assert.equal(config.templates.length, 2);
    assert.equal(config.nodes.length, 2);
    assert.equal(config.templates[1]!.annotationSelector?.text, 'kwok.x-k8s.io/node=fake');
    assert.equal(config.templates[1]!.labelSelector, undefined);
    assert.equal(config.templates[1]!.staticPodPath, '/m');
  });

  it('a selector flag alone is enough for the command, and adds to the file\'s templates', () => {
    const flags = fleetFlags(['--kubeconfig', '/k', '--manage-nodes-with-label-selector', 'type=kwok']);
    assert.equal(resolveFleetConfig({}, flags).templates[0]!.labelSelector?.text, 'type=kwok');
    const withFile = resolveFleetConfig({ kubeconfig: '/k', templates: [{ name: 'a' }] }, { labelSelector: 'type=kwok' });
    assert.deepEqual(withFile.templates.map((t) => t.name), ['a', '']);
    assert.throws(() => fleetFlags(['--kubeconfig', '/k']), /--config, --nodes or a --manage-nodes-with-\*-selector/);
  });

  const cases = [
    { desc: 'a selector that does not parse', raw: { kubeconfig: '/k', templates: [{ labelSelector: 'a in b' }] }, field: /templates\[0\]\.labelSelector: "a in b": expected '\(' at 6/ },
    { desc: 'an empty selector', raw: { kubeconfig: '/k', templates: [{ annotationSelector: '' }] }, field: /templates\[0\]\.annotationSelector: "": empty: it would select every Node/ },
    { desc: 'a selector that is not a string', raw: { kubeconfig: '/k', templates: [{ labelSelector: { type: 'kwok' } }] }, field: /templates\[0\]\.labelSelector: must be a selector string/ },
    { desc: 'a selector template with a name', raw: { kubeconfig: '/k', templates: [{ name: 'x', labelSelector: 'a' }] }, field: /templates\[0\]\.name: a template with a selector adopts the Nodes others create/ },
    { desc: 'a selector template with labels', raw: { kubeconfig: '/k', templates: [{ labelSelector: 'a', labels: { b: 'c' } }] }, field: /templates\[0\]\.labels: a template with a selector/ },
    { desc: 'a selector template with taints', raw: { kubeconfig: '/k', templates: [{ annotationSelector: 'a', taints: [] }] }, field: /templates\[0\]\.taints: a template with a selector/ },
    { desc: 'a selector template with a count', raw: { kubeconfig: '/k', templates: [{ annotationSelector: 'a', count: 3 }] }, field: /templates\[0\]\.count: a template with a selector/ },
    { desc: 'a selector template without the one credential', raw: { nodeKubeconfigDir: '/d', templates: [{ name: 'x' }, { labelSelector: 'a' }] }, field: /templates\[1\]: a selector template needs kubeconfig/ },
    { desc: 'a bad selector flag', raw: { kubeconfig: '/k' }, flags: { annotationSelector: 'a=(' }, field: /--manage-nodes-with-annotation-selector: "a=\(": expected a comma at 3/ },
    { desc: 'a template with neither a name nor a selector', raw: { kubeconfig: '/k', templates: [{ staticPodPath: '/m' }] }, field: /templates\[0\]\.name: must be a non-empty string \(or give labelSelector or annotationSelector\)/ },
  ];
  for (const c of cases) {
    it(`refuses ${c.desc}, naming the field`, () => refused(c.raw, c.field, c.flags));
  }
});
