// src/logger.ts: child loggers write through the logger they were made from, with the
// bindings before each line's own fields and no pino child made.
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
  test('no pino child is made: its lines go to the logger with its bindings, only at enabled levels', () => {
    const c = capture('info');
    const log = childLogger(c.logger, { node: 'n1' });
    log.debug({ a: 1 }, 'not at info');
    log.info({ a: 2 }, 'first');
    log.warn({ a: 3, node: 'own' }, 'second');
    assert.equal(c.children(), 0);
    const lines = c.lines();
    assert.deepEqual(
      lines.map((l) => [l['node'], l['a'], l['msg'], l['level']]),
      [
        ['n1', 2, 'first', 30],
        ['own', 3, 'second', 40],
      ],
      "the line's own field wins over a binding of the same name",
    );
  });

  test('a child of a child carries both bindings, the inner one last', () => {
    const c = capture('info');
    const outer = childLogger(c.logger, { node: 'n1', component: 'agent' });
    const inner = childLogger(outer, { component: 'lease' });
    inner.debug({}, 'quiet');
    inner.error({ code: 'X' }, 'failed');
    outer.info({}, 'outer');
    assert.equal(c.children(), 0);
    const [line, outerLine] = c.lines();
    assert.deepEqual(
      [line?.['node'], line?.['component'], line?.['code'], line?.['msg']],
      ['n1', 'lease', 'X', 'failed'],
    );
    assert.equal(outerLine?.['component'], 'agent', 'the inner binding stays with the inner child');
  });

  test('secrets in bindings are redacted as in the line itself', () => {
    const c = capture('info');
    childLogger(c.logger, { headers: { authorization: 'Bearer s3cret' } }).info({}, 'request');
    assert.ok(!JSON.stringify(c.lines()).includes('s3cret'));
  });

  test('no logger: silent; a logger without child(): itself', () => {
    assert.equal(childLogger(undefined, { node: 'n1' }), noopLogger);
    const plain: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    assert.equal(childLogger(plain, { node: 'n1' }), plain);
  });
});
