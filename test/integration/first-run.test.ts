// A first run as a new user makes it, on a machine where a kubelet (or anything) already holds
// the kubelet's default ports: `demo` (npm start) picks free ports and says where they are;
// `run` refuses with an error naming the flag and config field of the taken port.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

/** The kubelet's default ports on loopback: healthz, read-only, authenticated. */
const DEFAULT_PORTS = [10248, 10255, 10250];

// Holds a port on 127.0.0.1. If something else holds it already, it is just as taken.
function occupy(port: number): Promise<Server | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err)));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const held: Server[] = [];
before(async () => {
  for (const port of DEFAULT_PORTS) {
    const s = await occupy(port);
    if (s !== undefined) held.push(s);
  }
});
after(async () => {
  await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
});

async function runFails(args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [cli, 'run', '--hostname-override', 'first-run', ...args], { timeout: 20_000 });
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  }
  assert.fail('kubelet-pods run started although its port is taken');
}

describe('run with a default port taken', () => {
  const cases = [
    { desc: 'healthz port', args: ['--read-only-port', '0', '--port', '0', '--port', '0'], port: 10248, setting: '--healthz-port or healthzPort' },
    { desc: 'read-only port (10255 with flags only)', args: ['--healthz-port', '0', '--port', '0'], port: 10255, setting: '--read-only-port or readOnlyPort' },
    { desc: 'kubelet port (HTTPS, 10250)', args: ['--healthz-port', '0', '--read-only-port', '0'], port: 10250, setting: '--port or port' },
  ];
  for (const c of cases) {
    it(`${c.desc}: exits 1 naming the flag, the config field and 0 to turn it off`, async () => {
      const { code, stderr } = await runFails(c.args);
      assert.equal(code, 1, stderr);
      assert.match(stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${c.port}: the port is in use`));
      assert.ok(stderr.includes(`choose another with ${c.setting}, or 0 to turn this endpoint off`), stderr);
    });
  }
});

it('demo --until-synced with the default ports taken: starts on free ports and prints them', { timeout: 180_000 }, async () => {
  const { stdout, stderr } = await run(process.execPath, [cli, 'demo', '--until-synced'], { timeout: 170_000 });
  const line = stderr.split('\n').find((l) => l.startsWith('endpoints: '));
  assert.ok(line, `the demo prints where its endpoints are:\n${stderr}`);
  const ports = [...line.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
  assert.equal(ports.length, 3, `read-only, healthz and kubelet ports: ${line}`);
  for (const port of ports) assert.ok(!DEFAULT_PORTS.includes(port), `${port} is not a default port: ${line}`);
  assert.ok(stdout.includes(line), 'the live view shows them too');
});
