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

/** The chunks `file` imports statically (`import … from "./x.js"`), and the ones it imports dynamically (`import("./x.js")`). */
function chunkImports(file: string): { static: string[]; dynamic: string[] } {
  const text = readFileSync(join(binDir, file), 'utf8');
  return {
    static: [...text.matchAll(/^import\s*(?:[^'"()]*?\s*from\s*)?"\.\/([^"]+)";?$/gm)].map((m) => m[1]!),
    dynamic: [...text.matchAll(/\bimport\("\.\/([^"]+)"\)/g)].map((m) => m[1]!),
  };
}

/** `entry` and every chunk it imports statically, transitively. */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (f: string): void => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const g of chunkImports(f).static) visit(g);
  };
  visit(entry);
  return seen;
}

it('`run` reaches its Node status write without the Pod schema validator, prom-client or pino-pretty (each a chunk loaded when needed) and without node:http2', () => {
  // main.js imports each subcommand's chunk dynamically; what `run` loads before it acts is its
  // chunk and their static imports (docs/performance.md, "Restart → Node Ready, 2026-11-27").
  const runChunk = chunkImports('main.js').dynamic.find((f) => f.startsWith('run-command-'));
  assert.ok(runChunk !== undefined, 'main.js imports the run command');
  const startPath = new Set([...staticClosure('main.js'), ...staticClosure(runChunk)]);
  const text = [...startPath].map((f) => readFileSync(join(binDir, f), 'utf8')).join('\n');
  // esbuild names each module it bundles in a comment line: `// <path>`.
  const packages = new Set([...text.matchAll(/^\/\/ \S*node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]!));
  for (const name of ['kubernetes-models', 'ajv-i18n', 'prom-client', 'pino-pretty']) assert.ok(!packages.has(name), `${name} is on the start path of run`);
  assert.ok(packages.has('pino'), 'the check sees the packages on the path');
  assert.doesNotMatch(text, /"node:http2"|"http2"/, 'node:http2 is on the start path of run');
  // Each is still in the bundle, in a chunk of its own imported dynamically.
  const lazy = [...new Set([...startPath].flatMap((f) => chunkImports(f).dynamic).flatMap((f) => [...staticClosure(f)]))].filter((f) => !startPath.has(f));
  const lazyText = lazy.map((f) => readFileSync(join(binDir, f), 'utf8')).join('\n');
  for (const name of ['kubernetes-models', 'prom-client', 'pino-pretty']) assert.match(lazyText, new RegExp(`^// \\S*node_modules/${name}/`, 'm'), `${name} is not in a chunk run imports dynamically`);
});
