// The error registry and docs/errors.md must list the same codes (like fastify's
// test/internals/errors.test.js): a code nobody can look up, or a documented one that no
// longer exists, fails here.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, KubeletPodsError, hasErrorCode, kpError } from '../../src/errors.js';

const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
const documented = new Set([...docs.matchAll(/^\|\s*`(KP_ERR_[A-Z0-9_]+)`/gm)].map((m) => m[1]));

it('every registered error code is documented in docs/errors.md', () => {
  const missing = ERROR_CODES.filter((code) => !documented.has(code));
  assert.deepEqual(missing, []);
});

it('docs/errors.md documents no code that is not registered', () => {
  const stale = [...documented].filter((code) => !(ERROR_CODES as string[]).includes(code!));
  assert.deepEqual(stale, []);
});

it('codes follow KP_ERR_<AREA>_<WHAT> and errors carry their code and cause', () => {
  for (const code of ERROR_CODES) assert.match(code, /^KP_ERR_[A-Z0-9]+(_[A-Z0-9]+)+$/);
  const cause = new Error('root');
  const err = kpError('KP_ERR_POD_FULL_NAME', ['a_b_c'], { cause });
  assert.ok(err instanceof KubeletPodsError);
  assert.equal(err.cause, cause);
  assert.equal(err.message, 'failed to parse the pod full name "a_b_c"');
  assert.ok(hasErrorCode(err, 'KP_ERR_POD_FULL_NAME'));
  assert.ok(!hasErrorCode(new Error('x'), 'KP_ERR_POD_FULL_NAME'));
});
