// Addresses as Go's net package parses and prints them, and the pod CIDR checks
// (src/values/ip.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatIP, parseCidr, parseIP, podCidrProblem } from '../../../src/values/ip.js';

describe('parseIP and formatIP', () => {
  const cases: Array<{ desc: string; input: string; canonical: string }> = [
    { desc: 'IPv4', input: '10.88.0.2', canonical: '10.88.0.2' },
    { desc: 'IPv6 compressed', input: 'fd00::2', canonical: 'fd00::2' },
    { desc: 'IPv6 upper case, no compression', input: 'FD00:0:0:0:0:0:0:2', canonical: 'fd00::2' },
    { desc: 'the longest zero run is compressed', input: '2001:db8:0:0:1:0:0:1', canonical: '2001:db8::1:0:0:1' },
    { desc: 'a single zero group stays', input: '2001:db8:0:1:1:1:1:1', canonical: '2001:db8:0:1:1:1:1:1' },
    { desc: 'all zeros', input: '::', canonical: '::' },
    { desc: 'trailing zeros', input: 'fd00::', canonical: 'fd00::' },
    { desc: 'an embedded IPv4 address is read as its two groups', input: '::ffff:10.0.0.1', canonical: '::ffff:a00:1' },
  ];
  for (const { desc, input, canonical } of cases) {
    it(desc, () => {
      const ip = parseIP(input);
      assert.ok(ip !== undefined);
      assert.equal(formatIP(ip.family, ip.value), canonical);
    });
  }

  it('refuses what is not an IP address', () => {
    for (const text of ['', 'node-a', '10.0.0', '10.0.0.256', 'fe80::1%eth0', '1::2::3']) assert.equal(parseIP(text), undefined, text);
  });
});

describe('parseCidr and podCidrProblem', () => {
  it('clears host bits, as Go does', () => {
    assert.deepEqual(parseCidr('10.88.3.4/16'), { family: 4, network: parseIP('10.88.0.0')!.value, prefix: 16, size: 65536n });
    assert.equal(parseCidr('fd00:1::5/64')?.network, parseIP('fd00:1::')!.value);
  });

  it('accepts ranges with room for a pod and explains the others', () => {
    assert.equal(podCidrProblem('10.88.0.0/16'), undefined);
    assert.equal(podCidrProblem('10.88.0.0/30'), undefined);
    assert.equal(podCidrProblem('fd00::/126'), undefined);
    assert.match(podCidrProblem('10.88.0.0/31') ?? '', /at most \/30/);
    assert.match(podCidrProblem('fd00::/127') ?? '', /at most \/126/);
    for (const bad of ['10.88.0.0', '10.88.0.0/33', 'x/8', '10.88.0.0/-1', '10.88.0.0/1e1']) assert.match(podCidrProblem(bad) ?? '', /must be a CIDR/, bad);
  });
});
