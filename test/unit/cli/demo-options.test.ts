// `demo --nodes N` is checked before anything starts: a size the fleet can run, and no single-node
// configuration beside it.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { clusterComponents, parse } from '../../../src/cli/demo-command.js';

it('--nodes takes a whole number from 1 to 10,000 and gives the fleet size', () => {
  assert.equal(parse(['--nodes', '20']).fleetNodes, 20);
  assert.equal(parse([]).fleetNodes, undefined, 'without it, the single-node demo');
  for (const bad of ['0', 'N', '2.5', '-3', '10001', '']) {
    assert.throws(() => parse([`--nodes=${bad}`]), /--nodes must be a whole number from 1 to 10000/, `--nodes ${JSON.stringify(bad)}`);
  }
});

it('--config with --nodes is refused, naming both', () => {
  assert.throws(() => parse(['--nodes', '3', '--config', 'kubelet.yaml']), /--config is for the single-node demo; with --nodes/);
  assert.doesNotThrow(() => parse(['--config', 'kubelet.yaml']));
});

it('--no-scheduler and --no-controller-manager turn those components off; both run by default', () => {
  assert.deepEqual(clusterComponents(parse([]).values), { scheduler: true, controllerManager: true });
  assert.deepEqual(clusterComponents(parse(['--no-scheduler']).values), { scheduler: false, controllerManager: true });
  assert.deepEqual(clusterComponents(parse(['--nodes', '2', '--no-controller-manager']).values), { scheduler: true, controllerManager: false });
});

it('--no-deployment leaves the Deployment out; it runs by default', () => {
  assert.equal(parse([]).values['no-deployment'], false);
  assert.equal(parse(['--no-deployment']).values['no-deployment'], true);
  assert.equal(parse(['--nodes', '3', '--no-deployment']).values['no-deployment'], true);
});
