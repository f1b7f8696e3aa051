// src/logger.ts: child loggers are made at their first line of an enabled level, with the
// same bindings pino would have given them at once.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { childLogger, createLogger, noopLogger, type Logger } from '../../src/logger.js';

function capture(level: string): { logger: Logger; lines: () => Array<Record<string, unknown>>; children: () => number } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level, destination, pretty: false });
  let children = 0;
  // pino's children inherit from their parent: the count sees grandchildren too.
  const child = logger.child as (this: unknown, bindings: object) => unknown;
  (logger as unknown as { child: unknown }).child = function (this: unknown, bindings: object) {
    children++;
    return child.call(this, bindings);
  };
  return { logger, lines: () => chunks.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>), children: () => children };
}

describe('child loggers', () => {
  test('a child is made at its first line of an enabled level, once, and its lines carry its bindings', () => {
    const c = capture('info');
    const log = childLogger(c.logger, { node: 'n1' });
    assert.equal(c.children(), 0);
    log.debug({ a: 1 }, 'not at info');
    assert.equal(c.children(), 0);
    log.info({ a: 2 }, 'first');
    log.warn({ a: 3 }, 'second');
    assert.equal(c.children(), 1);
    const lines = c.lines();
    assert.deepEqual(
      lines.map((l) => [l['node'], l['a'], l['msg']]),
      [
        ['n1', 2, 'first'],
        ['n1', 3, 'second'],
      ],
    );
  });

  test('a child of a child carries both bindings, and is made only when it writes', () => {
    const c = capture('info');
    const inner = childLogger(childLogger(c.logger, { node: 'n1' }), { component: 'lease' });
    inner.debug({}, 'quiet');
    assert.equal(c.children(), 0);
    inner.error({ code: 'X' }, 'failed');
    assert.equal(c.children(), 2);
    const [line] = c.lines();
    assert.equal(line?.['node'], 'n1');
    assert.equal(line?.['component'], 'lease');
    assert.equal(line?.['code'], 'X');
  });

  test('no logger: silent; a logger without child(): itself', () => {
    assert.equal(childLogger(undefined, { node: 'n1' }), noopLogger);
    const plain: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    assert.equal(childLogger(plain, { node: 'n1' }), plain);
  });
});
