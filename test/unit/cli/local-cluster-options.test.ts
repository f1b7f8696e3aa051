// `local-cluster` runs kube-scheduler and kube-controller-manager unless told not to.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { parse } from '../../../src/cli/local-cluster-command.js';

it('--no-scheduler and --no-controller-manager are off by default and take no value', () => {
  const defaults = parse(['--dir', 'd']).values;
  assert.equal(defaults['no-scheduler'], false);
  assert.equal(defaults['no-controller-manager'], false);
  const off = parse(['--dir', 'd', '--no-scheduler', '--no-controller-manager']).values;
  assert.equal(off['no-scheduler'], true);
  assert.equal(off['no-controller-manager'], true);
  assert.throws(() => parse(['--dir', 'd', '--no-scheduler=false']), /KP_ERR_CLI_USAGE|--no-scheduler/);
});
