// Pod addresses of the simulated runtime: the allocator's rules (stable per UID, unique, reserved
// addresses skipped, a full range refusing until an address is released). Parsing and printing
// addresses, and the pod CIDR checks, are in test/unit/values/ip.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasErrorCode } from '../../../src/errors.js';
import { createPodAddressAllocator } from '../../../src/runtime/pod-addresses.js';
import { formatIP, parseIP } from '../../../src/values/ip.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';

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

describe('pod addresses memory', () => {
  it('holds an address of a small range as a number, not a bigint object', async () => {
    const allocator = createPodAddressAllocator({ cidr: '10.88.0.0/16' });
    const uids = Array.from({ length: 60_000 }, (_, i) => `uid-${i}`);
    const bytes = await retainedBytesPer(uids.length, (i) => {
      allocator.allocate(uids[i]!);
    });
    assert.equal(allocator.addressOf('uid-0'), allocator.allocate('uid-0'));
    // Two map entries, about 61 bytes at 60,000 (their tables nearly full); a bigint, 24 more.
    assert.ok(bytes < 73, `${bytes.toFixed(1)} bytes per address held`);
  });

  it('keeps a large IPv6 range exact', () => {
    const allocator = createPodAddressAllocator({ cidr: 'fd00::/64' });
    const address = allocator.allocate('a')!;
    assert.equal(allocator.claim('b', address), undefined, 'taken');
    allocator.release('a');
    assert.equal(allocator.claim('b', address), address);
    assert.equal(allocator.addressOf('b'), address);
  });
});
