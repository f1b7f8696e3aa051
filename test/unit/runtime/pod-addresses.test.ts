// Pod addresses of the simulated runtime: parsing and printing addresses as Go's net package
// does, pod CIDR checks, and the allocator's rules (stable per UID, unique, reserved addresses
// skipped, a full range refusing until an address is released).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasErrorCode } from '../../../src/errors.js';
import { createPodAddressAllocator, formatIP, parseCidr, parseIP, podCidrProblem } from '../../../src/runtime/pod-addresses.js';

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

describe('createPodAddressAllocator', () => {
  it('gives the same UID the same address in every allocator, whatever else was allocated first', () => {
    const a = createPodAddressAllocator({ cidr: '10.244.0.0/16' });
    const b = createPodAddressAllocator({ cidr: '10.244.0.0/16' });
    for (let i = 0; i < 50; i++) b.allocate(`other-${i}`);
    assert.equal(a.allocate('pod-uid-1'), b.allocate('pod-uid-1'));
    assert.equal(a.allocate('pod-uid-1'), a.addressOf('pod-uid-1'), 'allocating again answers the held address');
  });

  it('never gives two pods one address, and takes the next free one on a collision', () => {
    // Five usable addresses: a /29 without its network address, gateway and last address.
    const small = createPodAddressAllocator({ cidr: '10.0.0.0/29' });
    assert.equal(small.capacity, 5n);
    const got = Array.from({ length: 5 }, (_, i) => small.allocate(`u${i}`));
    assert.deepEqual([...got].sort(), ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6']);
    assert.equal(small.allocate('u5'), undefined, 'full');

    const big = createPodAddressAllocator({ cidr: '10.0.0.0/20' });
    const addresses = Array.from({ length: 2000 }, (_, i) => big.allocate(`pod-${i}`));
    assert.equal(new Set(addresses).size, 2000, 'unique with many collisions (2,000 pods in 4,093 addresses)');
    assert.ok(addresses.every((a) => a !== undefined && a !== '10.0.0.0' && a !== '10.0.0.1' && a !== '10.0.15.255'));
  });

  it('frees an address on release, and skips reserved addresses', () => {
    const alloc = createPodAddressAllocator({ cidr: '10.0.0.0/30', reserved: ['192.168.0.1'] });
    assert.equal(alloc.allocate('a'), '10.0.0.2');
    assert.equal(alloc.allocate('b'), undefined);
    alloc.release('a');
    assert.equal(alloc.addressOf('a'), undefined);
    assert.equal(alloc.allocate('b'), '10.0.0.2');

    const withNode = createPodAddressAllocator({ cidr: '10.0.0.0/29', reserved: ['10.0.0.4'] });
    const all = Array.from({ length: 4 }, (_, i) => withNode.allocate(`n${i}`));
    assert.ok(!all.includes('10.0.0.4'), 'the node IP is never a pod IP');
    assert.equal(withNode.allocate('n4'), undefined);
  });

  it('hands out canonical IPv6 addresses inside the range', () => {
    const alloc = createPodAddressAllocator({ cidr: 'fd00:10:244:1::/64' });
    const ip = alloc.allocate('v6-pod')!;
    const parsed = parseIP(ip)!;
    assert.equal(parsed.family, 6);
    assert.equal(formatIP(6, parsed.value), ip);
    assert.equal(parsed.value >> 64n, parseIP('fd00:10:244:1::')!.value >> 64n);
  });

  it('refuses an unusable range with KP_ERR_STATUS_OPTIONS', () => {
    assert.throws(() => createPodAddressAllocator({ cidr: '10.0.0.0/32' }), (err: unknown) => hasErrorCode(err, 'KP_ERR_STATUS_OPTIONS'));
  });
});
