// The Pod schema validator is loaded apart from the sources (src/sources/validate.ts): the agent
// awaits `loadPodSchema` before its file and HTTP sources start; a caller of the synchronous
// decoding functions who did not gets it loaded at the first check. Its own file: the module's
// state is the process's.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { checkPodSchema, loadPodSchema, podSchemaLoaded } from '../../../src/sources/validate.js';

it('checks a manifest without loadPodSchema first: the validator is loaded at the first check', async () => {
  assert.equal(podSchemaLoaded(), false);
  const check = checkPodSchema({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 7 }] } });
  assert.equal(podSchemaLoaded(), true);
  assert.deepEqual(check.typeErrors, ['spec.containers[0].image: must be string']);
  // Loading afterwards changes nothing.
  await loadPodSchema();
  assert.deepEqual(checkPodSchema({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' }, spec: { containers: [{ name: 'c', image: 'x' }] } }), { typeErrors: [], otherErrors: [] });
});
