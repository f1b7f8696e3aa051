import assert from 'node:assert/strict';
import { it } from 'node:test';
import { goArch, goOS } from '../../../src/values/go-platform.js';

it("Node.js's platform names become Go's, and a name Go shares passes through", () => {
  assert.equal(goArch('x64'), 'amd64');
  assert.equal(goArch('ia32'), '386');
  assert.equal(goArch('ppc64'), 'ppc64le');
  assert.equal(goArch('arm64'), 'arm64');
  assert.equal(goArch('riscv64'), 'riscv64');
  assert.equal(goOS('win32'), 'windows');
  assert.equal(goOS('linux'), 'linux');
  assert.equal(goOS('darwin'), 'darwin');
});
