// The README's main job: `kubelet-pods demo` (npm start) brings up the control plane and the
// agent on examples/ and gets every example static pod mirrored and Running.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const manifests = fileURLToPath(new URL('../../../examples/manifests/', import.meta.url));

it('demo --until-synced: every example static pod gets a Running mirror pod, shown in the view', { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, [cli, 'demo', '--until-synced'], { timeout: 170_000 });
  const count = (await readdir(manifests)).filter((f) => !f.startsWith('.')).length;
  const lastFrame = stdout.trim().split('\n\n').slice(-1)[0]!.split('\n');
  const rows = lastFrame.slice(1);
  assert.equal(rows.length, count, `one row per manifest in:\n${lastFrame.join('\n')}`);
  for (const row of rows) assert.match(row, /\byes\s+Running$/, `in sync and Running: ${row}`);
  assert.match(stdout, /kubectl --kubeconfig \S+admin\.kubeconfig get pods -A/, 'prints the admin kubeconfig');
});

it('demo --nodes 3 --until-synced: a fleet of 3 on the examples, progress lines up to every Node Ready and every mirror Running', { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, [cli, 'demo', '--nodes', '3', '--node', 'fd', '--until-synced'], { timeout: 170_000 });
  const count = (await readdir(manifests)).filter((f) => !f.startsWith('.')).length;
  const lines = stdout.trim().split('\n');
  assert.match(stdout, /fleet of 3 nodes \(fd-0 … fd-2\)/);
  assert.match(stdout, /kubectl --kubeconfig \S+admin\.kubeconfig get nodes,pods -A/, 'prints the admin kubeconfig');
  const progress = lines.filter((l) => /^\d+\.\d s · nodes Ready/.test(l));
  assert.ok(progress.length >= 2, `progress lines while it converges, not only the last:\n${stdout}`);
  const expected = 3 * count;
  // Counted from what the API server shows (a watch with the admin credential), not the fleet's own state.
  assert.match(progress.at(-1)!, new RegExp(`nodes Ready 3/3 · mirrors created ${expected}/${expected} · Running ${expected}/${expected} · API \\d+\\.\\d req/s · converged$`));
  assert.ok(progress.some((l) => !/API 0\.0 req\/s/.test(l)), `a request rate above 0 while converging:\n${progress.join('\n')}`);
});
