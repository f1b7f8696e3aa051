// The one way the agent's retrying loops (node registration, node lease, status writer) log a
// failed API call: checked through a real pino logger, since what must not leak is what pino
// would print of the error and its cause.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { ApiException } from '@kubernetes/client-node';
import { pino, type Logger as PinoLogger } from 'pino';
import { hasErrorCode } from '../../../src/errors.js';
import { logApiFailure } from '../../../src/kube/log-api-failure.js';

function capture(): { log: PinoLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const log = pino({ base: undefined }, destination);
  return { log, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const status = { kind: 'Status', reason: 'InternalError', message: 'etcd is unavailable', code: 500 };

it('logs the status, the reason and a registry error naming the object, without the response body or headers', () => {
  const { log, lines } = capture();
  const cause = new ApiException(500, 'server error', JSON.stringify({ ...status, details: { secret: 'body-secret' } }), {
    authorization: 'Bearer header-secret',
  });
  const error = logApiFailure(log, cause, {
    code: 'KP_ERR_NODE_LEASE',
    subject: 'node-1',
    message: 'node lease create or renew failed',
    fields: { attempt: 3 },
  });
  assert.ok(hasErrorCode(error, 'KP_ERR_NODE_LEASE'));
  assert.equal(error.message, 'failed to renew the lease of node "node-1": HTTP 500 InternalError');

  const [line] = lines();
  assert.equal(line!.msg, 'node lease create or renew failed');
  assert.equal(line!.level, 40, 'a warning: the loop retries');
  assert.equal(line!.httpStatus, 500);
  assert.equal(line!.reason, 'InternalError');
  assert.equal(line!.errorCode, 'KP_ERR_NODE_LEASE');
  assert.equal(line!.attempt, 3);
  const err = line!.err as { type: string; message: string };
  assert.equal(err.type, 'KubeletPodsError', 'err is the Error object, serialised by pino');
  assert.match(err.message, /etcd is unavailable/, "the Status's own message is kept as the cause");
  const text = JSON.stringify(line);
  assert.doesNotMatch(text, /body-secret/);
  assert.doesNotMatch(text, /header-secret/);
});

it('keeps the message of a transport error, which has no response', () => {
  const { log, lines } = capture();
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
  const error = logApiFailure(log, refused, { code: 'KP_ERR_NODE_REGISTER', subject: 'node-1', message: 'node registration failed' });
  assert.equal(error.message, 'failed to register node "node-1": request failed');
  assert.equal(error.cause, refused);
  const [line] = lines();
  assert.equal(line!.httpStatus, 0);
  assert.match((line!.err as { message: string }).message, /ECONNREFUSED/);
});
