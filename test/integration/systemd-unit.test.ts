// The systemd unit (deploy/systemd/kubelet-pods.service and its drop-in) checked with
// `systemd-analyze verify`, which loads the drop-in directory beside the unit and checks that
// ExecStart names an executable: the unit is verified on a copy whose ExecStart points at a
// program the test creates. The command line the drop-in assembles from its environment
// variables is parsed by the agent's own flag parser, with the paths the README uses.
// Needs systemd-analyze (Debian's `systemd` package; .ci/run installs it): without it the test
// fails and says so, it does not skip.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { parseRunArgs } from '../../src/cli/flags.js';

const execFileAsync = promisify(execFile);

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const UNIT_DIR = join(ROOT, 'deploy/systemd');
const UNIT = 'kubelet-pods.service';
const DROP_IN = 'kubelet-pods.service.d/10-kubelet-pods.conf';
const INSTALLED_EXE = '/usr/local/bin/kubelet-pods';

let work: string | undefined;

before(async () => {
  try {
    await execFileAsync('systemd-analyze', ['--version']);
  } catch (err) {
    throw new Error('systemd-analyze is not installed: `apt-get install -y systemd` (bash .ci/run installs it when missing)', {
      cause: err,
    });
  }
  work = await mkdtemp(join(tmpdir(), 'kp-systemd-'));
});

after(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/**
 * A copy of deploy/systemd in a fresh directory, every mention of the installed executable
 * replaced by `exe`; returns the copied unit's path.
 */
async function unitCopy(name: string, exe: string): Promise<string> {
  assert.ok(work, 'the work directory was made in before()');
  const dir = join(work, name);
  await cp(UNIT_DIR, dir, { recursive: true });
  for (const file of [UNIT, DROP_IN]) {
    const path = join(dir, file);
    await writeFile(path, (await readFile(path, 'utf8')).replaceAll(INSTALLED_EXE, exe));
  }
  return join(dir, UNIT);
}

async function verify(unit: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('systemd-analyze', ['verify', '--man=no', unit]);
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** `Key=value` lines of a unit file's [Service] section, in order (quotes kept). */
function serviceSettings(text: string): [string, string][] {
  const settings: [string, string][] = [];
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) section = line;
    else if (section === '[Service]') {
      const eq = line.indexOf('=');
      settings.push([line.slice(0, eq), line.slice(eq + 1)]);
    }
  }
  return settings;
}

it('systemd-analyze verify accepts the unit with its drop-in, without a warning', async () => {
  assert.ok(work, 'the work directory was made in before()');
  const exe = join(work, 'kubelet-pods');
  await writeFile(exe, '#!/bin/sh\nexit 0\n');
  await chmod(exe, 0o755);
  const result = await verify(await unitCopy('good', exe));
  assert.deepEqual(result, { code: 0, output: '' });
});

it('systemd-analyze verify reads the drop-in: the same unit fails when the drop-in’s ExecStart names no program', async () => {
  assert.ok(work, 'the work directory was made in before()');
  const result = await verify(await unitCopy('missing-exe', join(work, 'no-such-program')));
  assert.notEqual(result.code, 0);
  assert.match(result.output, /no-such-program is not executable/);
});

it('restarts always, and the drop-in’s command line is one the agent parses, with the README’s paths', async () => {
  const unit = serviceSettings(await readFile(join(UNIT_DIR, UNIT), 'utf8'));
  assert.ok(unit.some(([k, v]) => k === 'Restart' && v === 'always'), 'Restart=always');

  const dropIn = serviceSettings(await readFile(join(UNIT_DIR, DROP_IN), 'utf8'));
  const env = new Map<string, string>();
  for (const [key, value] of dropIn) {
    if (key !== 'Environment') continue;
    const m = /^"([A-Z_]+)=(.*)"$/.exec(value);
    assert.ok(m, `Environment=${value} is one quoted NAME=value`);
    env.set(m[1]!, m[2]!);
  }
  const execStarts = dropIn.filter(([k]) => k === 'ExecStart').map(([, v]) => v);
  assert.equal(execStarts[0], '', 'the drop-in first clears the unit’s ExecStart');
  assert.equal(execStarts.length, 2);
  // systemd splits unquoted $VAR into words; a variable that is not set (the optional
  // /etc/default/kubelet-pods) expands to nothing.
  const words = execStarts[1]!
    .split(/\s+/)
    .flatMap((w) => (w.startsWith('$') ? (env.get(w.slice(1)) ?? '').split(/\s+/).filter((x) => x !== '') : [w]));
  assert.deepEqual(words.slice(0, 2), [INSTALLED_EXE, 'run']);
  const flags = parseRunArgs(words.slice(2));
  assert.equal(flags.kubeconfig, '/var/lib/kubelet-pods/node.kubeconfig');
  assert.equal(flags.config, '/etc/kubelet-pods/config.yaml');

  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, /--kubeconfig \/var\/lib\/kubelet-pods\/node\.kubeconfig/, 'the README runs the agent with the same kubeconfig');
  assert.match(readme, /--config \/etc\/kubelet-pods\/config\.yaml/, 'the README runs the agent with the same config file');
});
