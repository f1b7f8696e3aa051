// The node IP (`--node-ip`) and pod range (`--pod-cidr`, `podCIDR`) of `kubelet-pods run`: how
// they are resolved and checked (cmd/kubelet/app/options for the flags, the kubelet's node
// address rules for the default). The table test (fields.test.ts) covers their documentation.

import assert from 'node:assert/strict';
import type { NetworkInterfaceInfo } from 'node:os';
import { describe, it } from 'node:test';
import { resolveRunConfig } from '../../../src/cli/flags.js';
import { defaultNodeIP, loadAgentConfig, type NetworkInterfaces } from '../../../src/config/agent-config.js';
import { hasErrorCode } from '../../../src/errors.js';

function iface(address: string, internal = false): NetworkInterfaceInfo {
  const v6 = address.includes(':');
  return {
    address,
    netmask: v6 ? 'ffff:ffff:ffff:ffff::' : '255.255.255.0',
    family: v6 ? 'IPv6' : 'IPv4',
    mac: '00:00:00:00:00:00',
    internal,
    cidr: null,
    ...(v6 ? { scopeid: 0 } : {}),
  } as NetworkInterfaceInfo;
}

const machine: NetworkInterfaces = {
  lo: [iface('127.0.0.1', true), iface('::1', true)],
  eth0: [iface('fe80::1'), iface('fd00::2'), iface('192.0.2.2')],
  eth1: [iface('198.51.100.7')],
};

const options = (interfaces: NetworkInterfaces = machine) => ({ hostname: () => 'node-a', networkInterfaces: () => interfaces });

describe('defaultNodeIP', () => {
  const cases: Array<{ desc: string; interfaces: NetworkInterfaces; family?: 4 | 6; expected: string }> = [
    { desc: 'the first IPv4 address that is not loopback', interfaces: machine, expected: '192.0.2.2' },
    { desc: 'IPv6 first when asked, link-local skipped', interfaces: machine, family: 6, expected: 'fd00::2' },
    { desc: 'an IPv6 address when there is no IPv4 one', interfaces: { lo: [iface('127.0.0.1', true)], eth0: [iface('fd00::9')] }, expected: 'fd00::9' },
    { desc: 'link-local IPv4 is skipped', interfaces: { eth0: [iface('169.254.1.1'), iface('10.1.2.3')] }, expected: '10.1.2.3' },
    { desc: 'loopback when there is nothing else', interfaces: { lo: [iface('127.0.0.1', true)] }, expected: '127.0.0.1' },
    { desc: 'no interfaces at all', interfaces: {}, expected: '127.0.0.1' },
  ];
  for (const { desc, interfaces, family, expected } of cases) {
    it(desc, () => assert.equal(defaultNodeIP(interfaces, family), expected));
  }
});

describe('--node-ip', () => {
  it('defaults to the machine\'s address', async () => {
    const { config } = await loadAgentConfig({}, options());
    assert.equal(config.nodeIP, '192.0.2.2');
  });

  it('takes one address as given, loopback included', async () => {
    for (const ip of ['10.9.8.7', '127.0.0.1', 'fd00::5']) {
      assert.equal((await loadAgentConfig({ nodeIP: ip }, options())).config.nodeIP, ip);
    }
    assert.equal((await resolveRunConfig(['--node-ip', '10.1.1.1', '--hostname-override', 'x'], options())).config.nodeIP, '10.1.1.1');
    assert.equal((await loadAgentConfig({ nodeIP: 'FD00:0:0::5' }, options())).config.nodeIP, 'fd00::5', 'in canonical form');
  });

  it('reads 0.0.0.0 and :: as "the machine\'s address of that family"', async () => {
    assert.equal((await loadAgentConfig({ nodeIP: '0.0.0.0' }, options())).config.nodeIP, '192.0.2.2');
    assert.equal((await loadAgentConfig({ nodeIP: '::' }, options())).config.nodeIP, 'fd00::2');
  });

  it('refuses a name and a dual-stack pair, naming the flag', async () => {
    for (const [value, fragment] of [
      ['node-a', 'must be an IP address'],
      ['10.0.0.1,fd00::1', 'one address only'],
    ] as const) {
      await assert.rejects(loadAgentConfig({ nodeIP: value }, options()), (err: unknown) => {
        assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_FLAGS'));
        assert.match((err as Error).message, /--node-ip/);
        assert.ok((err as Error).message.includes(fragment), (err as Error).message);
        return true;
      });
    }
  });
});

describe('podCIDR / --pod-cidr', () => {
  const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
  const withFile = (text: string) => ({ ...options(), readFile: async () => header + text });

  it('defaults to 10.88.0.0/16, takes the file\'s value, and the flag over the file', async () => {
    assert.equal((await loadAgentConfig({}, options())).config.podCIDR, '10.88.0.0/16');
    const fromFile = await loadAgentConfig({ config: '/etc/kubelet.yaml' }, withFile('podCIDR: 10.244.1.0/24\n'));
    assert.equal(fromFile.config.podCIDR, '10.244.1.0/24');
    assert.ok(!fromFile.ignoredFields.includes('podCIDR'), 'podCIDR is honoured');
    const fromFlag = await loadAgentConfig({ config: '/etc/kubelet.yaml', podCIDR: 'fd00:10::/64' }, withFile('podCIDR: 10.244.1.0/24\n'));
    assert.equal(fromFlag.config.podCIDR, 'fd00:10::/64');
  });

  it('reports a bad value in the file and in the flag, each where it came from', async () => {
    await assert.rejects(loadAgentConfig({ config: '/etc/kubelet.yaml' }, withFile('podCIDR: 10.244.1.0\n')), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_INVALID'));
      assert.match((err as Error).message, /podCIDR: must be a CIDR/);
      return true;
    });
    await assert.rejects(loadAgentConfig({ podCIDR: '10.0.0.0/31' }, options()), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_FLAGS'));
      assert.match((err as Error).message, /--pod-cidr: must leave room/);
      return true;
    });
  });
});

describe('clusterDNS / --cluster-dns', () => {
  const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
  const withFile = (text: string) => ({ ...options(), readFile: async () => header + text });

  it('none by default; a list in the file; the flag (repeatable, comma-separated) over the file; non-IPs are problems', async () => {
    assert.deepEqual((await loadAgentConfig({}, options())).config.clusterDNS, []);
    const fromFile = await loadAgentConfig({ config: '/etc/kubelet.yaml' }, withFile('clusterDNS: [10.96.0.10, "fd00::a"]\n'));
    assert.deepEqual(fromFile.config.clusterDNS, ['10.96.0.10', 'fd00::a']);
    assert.ok(!fromFile.ignoredFields.includes('clusterDNS'), 'clusterDNS is honoured');
    const flags = await resolveRunConfig(['--cluster-dns', '10.0.0.10, 10.0.0.11', '--cluster-dns=10.0.0.12'], options());
    assert.deepEqual(flags.config.clusterDNS, ['10.0.0.10', '10.0.0.11', '10.0.0.12']);
    await assert.rejects(loadAgentConfig({ config: '/etc/kubelet.yaml' }, withFile('clusterDNS: 10.96.0.10\n')), /clusterDNS: must be a list of IP addresses/);
    await assert.rejects(loadAgentConfig({ clusterDNS: ['10.0.0.10,dns.local'] }, options()), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_FLAGS'));
      assert.match((err as Error).message, /--cluster-dns: not an IP address: "dns.local"/);
      return true;
    });
  });
});
