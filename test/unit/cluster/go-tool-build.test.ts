// The Go tool builder with a stand-in `go` command: the cache key, caching, pruning, the
// build arguments, progress lines and the errors without Go. (No kubelet counterpart: this is
// the project's own test infrastructure.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hasErrorCode } from '../../../src/errors.js';
import { ensureGoTool, goSourceHash, type GoTool } from '../../../src/cluster/go-tool-build.js';
import { CONTROL_PLANE_TOOL, controlPlaneSourceHash } from '../../../src/cluster/control-plane-build.js';
import { HOLLOW_KUBELET_TOOL } from '../../helpers/hollow-kubelet.js';
import { KWOK_TOOL } from '../../helpers/kwok.js';

async function moduleDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kp-gotool-src-'));
  await writeFile(join(dir, 'go.mod'), 'module example/tool\n\ngo 1.24.0\n');
  await writeFile(join(dir, 'go.sum'), '');
  await writeFile(join(dir, 'main.go'), 'package main\n\nfunc main() {}\n');
  return dir;
}

// A `go` that reports a version, and for `build` records its arguments, names two packages
// on stderr as `go build -v` does, and writes the -o file.
async function fakeGo(version = 'go1.26.0'): Promise<{ command: string; argsLog: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kp-fake-go-'));
  const argsLog = join(dir, 'args.log');
  const command = join(dir, 'go');
  await writeFile(
    command,
    `#!/bin/sh
if [ "$1" = env ]; then echo ${version}; exit 0; fi
printf '%s\\n' "$@" >> ${argsLog}
echo example/tool/a >&2
echo example/tool >&2
out=""
while [ $# -gt 0 ]; do if [ "$1" = -o ]; then out="$2"; fi; shift; done
printf '#!/bin/sh\\n' > "$out"
chmod +x "$out"
`,
  );
  await chmod(command, 0o755);
  return { command, argsLog };
}

const TOOL: GoTool = {
  id: 'example-tool',
  binaryName: 'example',
  title: 'the example tool',
  binaryEnv: 'KUBELET_PODS_TEST_EXAMPLE_TOOL',
  approxPackages: 2,
  firstBuildEstimate: 'no time',
};

describe('Go tool builder', () => {
  it('the cache key without build arguments is the control plane key: name and content of *.go, go.mod, go.sum', async () => {
    const dir = await moduleDir();
    await writeFile(join(dir, 'README.md'), 'not part of the key');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'x.go'), 'package sub');
    const expected = createHash('sha256');
    for (const name of ['go.mod', 'go.sum', 'main.go']) {
      expected.update(name).update('\0').update(await readFile(join(dir, name))).update('\0');
    }
    const key = expected.digest('hex').slice(0, 16);
    assert.equal(await goSourceHash(dir), key);
    assert.equal(await controlPlaneSourceHash(dir), key);
    assert.equal(CONTROL_PLANE_TOOL.buildArgs, undefined, 'extra build arguments would change the control plane cache key');

    assert.notEqual(await goSourceHash(dir, ['-ldflags=-X a=b']), key, 'build arguments are part of the key');
    await writeFile(join(dir, 'main.go'), 'package main\n\nfunc main() { }\n');
    assert.notEqual(await goSourceHash(dir), key, 'a source change is a new key');
  });

  it('builds once with the tool build arguments, then uses the cache; prunes only its own older builds, keeping the newest few', async () => {
    const src = await moduleDir();
    const cacheRoot = await mkdtemp(join(tmpdir(), 'kp-gotool-cache-'));
    // Three older builds of this tool, oldest first: the two newest stay beside the new one.
    for (const [i, hash] of ['0000000000000001', '0000000000000002', '0000000000000003'].entries()) {
      await mkdir(join(cacheRoot, `example-tool-${hash}`));
      const at = new Date(Date.parse('2026-01-01T00:00:00Z') + i * 60_000);
      await utimes(join(cacheRoot, `example-tool-${hash}`), at, at);
    }
    await mkdir(join(cacheRoot, 'control-plane-0123456789abcdef'));
    const go = await fakeGo();
    const tool = { ...TOOL, buildArgs: ['-ldflags=-X main.v=1'] };
    const lines: string[] = [];

    const first = await ensureGoTool(tool, { sourceDir: src, cacheRoot, goCommand: go.command, progress: (l) => lines.push(l), progressIntervalMs: 0 });
    assert.equal(first.built, true);
    assert.equal(first.sourceHash, await goSourceHash(src, tool.buildArgs));
    assert.equal(first.path, join(cacheRoot, `example-tool-${first.sourceHash}`, 'example'));
    const args = (await readFile(go.argsLog, 'utf8')).trim().split('\n');
    assert.deepEqual(args.slice(0, 4), ['build', '-trimpath', '-ldflags=-X main.v=1', '-v']);
    assert.match(lines[0]!, /^building the example tool in /);
    assert.ok(lines.some((l) => /^building… 2 of about 2 packages/.test(l)), lines.join('\n'));
    assert.match(lines.at(-1)!, /^built the example tool in \d+ s \(2 packages compiled\)$/);
    assert.deepEqual(
      (await readdir(cacheRoot)).sort(),
      ['control-plane-0123456789abcdef', 'example-tool-0000000000000002', 'example-tool-0000000000000003', `example-tool-${first.sourceHash}`].sort(),
    );

    const second = await ensureGoTool(tool, { sourceDir: src, cacheRoot, goCommand: go.command, progress: () => {} });
    assert.deepEqual(second, { ...first, built: false });
    assert.equal((await readFile(go.argsLog, 'utf8')).trim().split('\n').length, args.length, 'go ran once');
  });

  it('a tool with a build package builds that package instead of ., under a key of its own', async () => {
    const src = await moduleDir();
    const cacheRoot = await mkdtemp(join(tmpdir(), 'kp-gotool-cache-'));
    const go = await fakeGo();
    const tool = { ...TOOL, buildPackage: 'example.org/upstream/cmd/tool' };
    const built = await ensureGoTool(tool, { sourceDir: src, cacheRoot, goCommand: go.command, progress: () => {} });
    assert.equal(built.built, true);
    const args = (await readFile(go.argsLog, 'utf8')).trim().split('\n');
    assert.equal(args.at(-1), 'example.org/upstream/cmd/tool', 'the package is the last argument of go build');
    assert.ok(!args.includes('.'));
    assert.notEqual(built.sourceHash, await goSourceHash(src), 'the package is part of the key');
    assert.equal(built.sourceHash, await goSourceHash(src, ['package=example.org/upstream/cmd/tool']));
  });

  it('without Go, or with an old one, fails with KP_ERR_CLUSTER_NO_GO naming the tool', async () => {
    const src = await moduleDir();
    const cacheRoot = await mkdtemp(join(tmpdir(), 'kp-gotool-cache-'));
    await assert.rejects(ensureGoTool(TOOL, { sourceDir: src, cacheRoot, goCommand: join(cacheRoot, 'no-such-go') }), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CLUSTER_NO_GO'));
      assert.match((err as Error).message, /^cannot build the example tool: .* is not on PATH; install Go >= 1\.24/);
      return true;
    });
    const old = await fakeGo('go1.22.5');
    await assert.rejects(ensureGoTool(TOOL, { sourceDir: src, cacheRoot, goCommand: old.command }), (err: unknown) => {
      assert.ok(hasErrorCode(err, 'KP_ERR_CLUSTER_NO_GO'));
      assert.match((err as Error).message, /found go1\.22\.5, which is too old/);
      return true;
    });
  });

  it('the env override skips the build and must name an executable', async () => {
    const go = await fakeGo();
    process.env[TOOL.binaryEnv] = go.command;
    try {
      assert.deepEqual(await ensureGoTool(TOOL, { sourceDir: '/nonexistent' }), { path: go.command, built: false, sourceHash: '' });
      process.env[TOOL.binaryEnv] = go.argsLog; // not there, not executable
      await assert.rejects(ensureGoTool(TOOL), (err: unknown) => hasErrorCode(err, 'KP_ERR_CLUSTER_BUILD'));
    } finally {
      delete process.env[TOOL.binaryEnv];
    }
  });

  it('the tools of this repository have distinct ids, binaries and overrides, none a prefix of another', () => {
    const tools = [CONTROL_PLANE_TOOL, HOLLOW_KUBELET_TOOL, KWOK_TOOL];
    for (const a of tools) {
      for (const b of tools) {
        if (a === b) continue;
        assert.notEqual(a.binaryEnv, b.binaryEnv);
        assert.ok(!a.id.startsWith(b.id), `${a.id} starts with ${b.id}`);
      }
    }
  });
});
