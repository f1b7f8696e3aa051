// The README's main job: `kubelet-pods demo` (npm start) brings up the control plane and the
// agent on examples/, gets every example static pod mirrored and Running, and runs the example
// Deployment beside them, whose pods kube-scheduler places on the node, counting the mirror
// pods' requests as taken; the view shows both.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const manifests = fileURLToPath(new URL('../../../examples/manifests/', import.meta.url));

/** The example static pods request 250m CPU and 256Mi in all (examples/manifests). */
const MIRRORS_CPU = '250m';
const MIRRORS_MEMORY = '256Mi';

it('demo --until-synced: every example static pod gets a Running mirror pod, and the Deployment its pods on the node, shown in the view', { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, [cli, 'demo', '--until-synced'], { timeout: 170_000 });
  const count = (await readdir(manifests)).filter((f) => !f.startsWith('.')).length;
  const paragraphs = stdout.trim().split('\n\n');
  const lastFrame = paragraphs.at(-1)!.split('\n');
  const rows = lastFrame.slice(1);
  assert.equal(rows.length, count, `one row per manifest in:\n${lastFrame.join('\n')}`);
  for (const row of rows) assert.match(row, /\byes\s+Running$/, `in sync and Running: ${row}`);
  assert.match(stdout, /kubectl --kubeconfig \S+admin\.kubeconfig get pods -A/, 'prints the admin kubeconfig');

  // Above the table: what the scheduler sees of the node.
  const section = paragraphs.at(-2)!;
  const lines = section.split('\n');
  assert.match(lines[0]!, /^DEPLOYMENT default\/hello: 2\/2 pods placed by kube-scheduler, 2\/2 Running · each requests cpu 250m, memory 128Mi$/, section);
  const pods = lines.filter((l) => l.startsWith('hello-'));
  assert.equal(pods.length, 2, `the Deployment's two pods:\n${section}`);
  for (const pod of pods) assert.match(pod, /^hello-[a-z0-9]+-[a-z0-9]+\s+default\s+demo-node\s+Running$/, 'placed on the node by the scheduler, run by the agent');
  assert.match(section, new RegExp(`^demo-node\\s+mirror pods\\s+${count}\\s+${MIRRORS_CPU}/\\d+ \\(\\d+%\\)\\s+${MIRRORS_MEMORY}/[\\d.]+[KMGT]i \\((<1|\\d+)%\\)$`, 'm'), 'the mirror pods\' share of the node');
  assert.match(section, /^demo-node\s+ordinary pods\s+2\s+500m\/\d+ \(\d+%\)\s+256Mi\//m, "the Deployment's share");
  assert.match(
    section,
    new RegExp(`^scheduler sees: mirror pods of static pods hold ${MIRRORS_CPU} of \\d+ cpu and ${MIRRORS_MEMORY} of \\S+ memory on demo-node; 2 ordinary pods placed beside them; room for \\d+ more hello pods \\(\\d+ if it did not count the mirror pods\\)$`, 'm'),
  );
  assert.match(section, /^one too many: kubectl --kubeconfig \S+admin\.kubeconfig -n default scale deployment hello --replicas \d+/m);
});

it('demo --no-deployment --until-synced: the static pods and their share of the node only', { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, [cli, 'demo', '--no-deployment', '--until-synced'], { timeout: 170_000 });
  const section = stdout.trim().split('\n\n').at(-2)!;
  assert.doesNotMatch(stdout, /DEPLOYMENT|hello-/);
  assert.match(section, new RegExp(`^demo-node\\s+mirror pods\\s+\\d+\\s+${MIRRORS_CPU}/`, 'm'), section);
  assert.match(section, /^scheduler sees: mirror pods of static pods hold 250m of \d+ cpu and 256Mi of \S+ memory on demo-node; 0 ordinary pods placed beside them$/m, section);
});

it('demo --nodes 3 --until-synced: a fleet of 3 on the examples, progress lines up to every Node Ready, every mirror and every pod of the Deployment Running', { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, [cli, 'demo', '--nodes', '3', '--node', 'fd', '--until-synced'], { timeout: 170_000 });
  const count = (await readdir(manifests)).filter((f) => !f.startsWith('.')).length;
  const lines = stdout.trim().split('\n');
  assert.match(stdout, /fleet of 3 nodes \(fd-0 … fd-2\)/);
  assert.match(stdout, /kubectl --kubeconfig \S+admin\.kubeconfig get nodes,pods -A/, 'prints the admin kubeconfig');
  const progress = lines.filter((l) => /^\d+\.\d s · nodes Ready/.test(l));
  assert.ok(progress.length >= 2, `progress lines while it converges, not only the last:\n${stdout}`);
  const expected = 3 * count;
  // Counted from what the API server shows (a watch with the admin credential), not the fleet's own state.
  assert.match(
    progress.at(-1)!,
    new RegExp(`nodes Ready 3/3 · mirrors created ${expected}/${expected} · Running ${expected}/${expected} · deployment placed 2/2 · Running 2/2 · API \\d+\\.\\d req/s · converged$`),
  );
  assert.ok(progress.some((l) => !/API 0\.0 req\/s/.test(l)), `a request rate above 0 while converging:\n${progress.join('\n')}`);
  // After the line that says converged: what the scheduler sees of the fleet's nodes.
  const after = lines.slice(lines.indexOf(progress.at(-1)!) + 1);
  const pods = after.filter((l) => l.startsWith('hello-'));
  assert.equal(pods.length, 2, `the Deployment's pods:\n${after.join('\n')}`);
  for (const pod of pods) assert.match(pod, /^hello-\S+\s+default\s+fd-[0-2]\s+Running$/);
  for (const node of ['fd-0', 'fd-1', 'fd-2']) assert.match(after.join('\n'), new RegExp(`^${node}\\s+mirror pods\\s+${count}\\s+${MIRRORS_CPU}/\\d+ \\(\\d+%\\)`, 'm'));
  assert.ok(
    after.some((l) => /^scheduler sees: mirror pods of static pods hold 750m of \d+ cpu and 768Mi of \S+ memory on 3 nodes; 2 ordinary pods placed beside them; room for \d+ more hello pods/.test(l)),
    after.join('\n'),
  );
});
