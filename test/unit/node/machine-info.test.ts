// What the Node reports about the machine: files read once, missing ones left empty, and
// byte counts spelled as the API server spells them back.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpus, release, totalmem } from 'node:os';
import { binaryQuantity, hugePageResource, readMachineInfo, type MachineFiles } from '../../../src/node/machine-info.js';

function files(contents: Record<string, string>, dirs: Record<string, string[]> = {}, fsBytes?: number): MachineFiles {
  return {
    readText(path) {
      const v = contents[path];
      if (v === undefined) throw new Error(`ENOENT ${path}`);
      return v;
    },
    list(path) {
      const v = dirs[path];
      if (v === undefined) throw new Error(`ENOENT ${path}`);
      return v;
    },
    filesystemBytes() {
      if (fsBytes === undefined) throw new Error('statfs failed');
      return fsBytes;
    },
  };
}

describe('readMachineInfo', () => {
  it('reads the ids, the OS image and the huge pages from their files', () => {
    const info = readMachineInfo(
      files(
        {
          '/etc/os-release': 'NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n',
          '/etc/machine-id': 'abc123\n',
          '/proc/sys/kernel/random/boot_id': 'b00t\n',
          '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages': '3\n',
        },
        { '/sys/kernel/mm/hugepages': ['hugepages-2048kB', 'hugepages-1048576kB', 'other'] },
        10 * 2 ** 30,
      ),
    );
    assert.equal(info.osImage, 'Debian GNU/Linux 12 (bookworm)');
    assert.equal(info.machineID, 'abc123');
    assert.equal(info.bootID, 'b00t');
    assert.equal(info.systemUUID, '', 'unreadable: empty, as the kubelet leaves it');
    assert.equal(info.ephemeralStorageBytes, 10 * 2 ** 30);
    assert.deepEqual([...info.hugePages], [[2 * 2 ** 20, 6 * 2 ** 20], [2 ** 30, 0]]);
    assert.equal(info.kernelVersion, release());
    assert.equal(info.cpus, cpus().length);
    assert.equal(info.memoryBytes, totalmem());
  });

  it('leaves what it cannot read empty or zero', () => {
    const info = readMachineInfo(files({}));
    assert.equal(info.machineID, '');
    assert.equal(info.bootID, '');
    assert.equal(info.osImage, 'Linux');
    assert.equal(info.ephemeralStorageBytes, 0);
    assert.equal(info.hugePages.size, 0);
  });
});

describe('binaryQuantity', () => {
  it('uses the largest power-of-1024 suffix that divides exactly', () => {
    assert.equal(binaryQuantity(0), '0');
    assert.equal(binaryQuantity(1000), '1000');
    assert.equal(binaryQuantity(2048), '2Ki');
    assert.equal(binaryQuantity(3840 * 2 ** 20), '3840Mi');
    assert.equal(binaryQuantity(2 ** 30), '1Gi');
    assert.equal(binaryQuantity(25276514304), '24684096Ki');
    assert.equal(hugePageResource(2 * 2 ** 20), 'hugepages-2Mi');
    assert.equal(hugePageResource(2 ** 30), 'hugepages-1Gi');
  });
});
