// The package's command is the bundle package.json's `build:bin` makes with the flags of
// tools/exe/bin-bundle.ts, and that bundle runs `kubelet-pods run` without client-node inside.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN_BUNDLE_DIR, binBundleScript } from '../../../tools/exe/bin-bundle.js';
import { PACKAGE_ROOT } from '../../../tools/exe/build-exe.js';
import { podManifestYaml } from '../../helpers/manifests.js';

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: Record<string, string> };
const binDir = join(PACKAGE_ROOT, BIN_BUNDLE_DIR);

it('package.json builds the command with the flags of tools/exe/bin-bundle.ts and points its bin there', () => {
  assert.equal(pkg.scripts['build:bin'], binBundleScript());
  assert.match(pkg.scripts['build'] ?? '', /&& npm run build:bin$/);
  assert.equal(pkg.bin['kubelet-pods'], `./${BIN_BUNDLE_DIR}/main.js`);
});

it('the bundle (made by npm run build) carries no client-node code and runs an agent standalone', { timeout: 30_000 }, async () => {
  const files = readdirSync(binDir).filter((f) => f.endsWith('.js'));
  assert.ok(files.includes('main.js'), `${binDir} has no main.js: run npm run build`);
  for (const f of files) {
    const text = readFileSync(join(binDir, f), 'utf8');
    // A class every client-node build defines; only an import of the package may name it.
    assert.doesNotMatch(text, /class ObjectSerializer/, `${f} carries client-node`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'kp-bin-bundle-'));
  try {
    writeFileSync(join(dir, 'web.yaml'), podManifestYaml('web', 'default'));
    const child = spawn(process.execPath, [join(binDir, 'main.js'), 'run', '--pod-manifest-path', dir, '--hostname-override', 'bundled', '--healthz-port', '0', '--read-only-port', '0', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    const started = new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('"agent started"')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${log}`)));
    });
    await started;
    // `run` takes signals once start() has returned, a moment after its "agent started" line.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0, log);
    assert.match(log, /"sources":\["file"\]/);
    assert.match(log, /"standalone":true/);
    assert.match(log, /agent stopped/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
