// Node names (src/values/node-name.ts): one rule for the configuration, the fleet's templates and
// node registration. Those callers keep their own tests of the messages they give.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasErrorCode } from '../../../src/errors.js';
import { isValidNodeName, nodeNameFromHostname, validateNodeName } from '../../../src/values/node-name.js';

describe('node names', () => {
  it('takes a host name trimmed and lower-cased, as the kubelet does', () => {
    assert.equal(nodeNameFromHostname('  Worker-1.Example.COM\n'), 'worker-1.example.com');
  });

  it('accepts DNS-1123 subdomains only', () => {
    for (const ok of ['a', 'node-1', 'node-1.example.com', 'x'.repeat(253)]) assert.ok(isValidNodeName(ok), ok);
    for (const bad of ['', 'Node', 'node_1', '-a', 'a-', 'a..b', 'x'.repeat(254)]) assert.ok(!isValidNodeName(bad), bad);
    assert.doesNotThrow(() => validateNodeName('node-1'));
    assert.throws(() => validateNodeName('Node_A'), (e: unknown) => hasErrorCode(e, 'KP_ERR_NODE_OPTIONS') && e.message.includes('"Node_A"'));
  });
});
