// The keep-alive pool against a real HTTPS server on loopback: how many connections it opens,
// the requests waiting for a connection, a bound raised between two bursts, connections closed
// once idle but not while in use, and the certificates kept out of the names node's agent
// builds for every request.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createConnectionPool } from '../../../src/kube/connection-pool.js';
import { makeCA } from '../../helpers/certificates.js';
import { httpsGet } from '../../helpers/https-get.js';

describe('createConnectionPool', () => {
  const ca = makeCA('pool-test-ca');
  let server: Server;
  let port = 0;
  let open = 0;
  let opened = 0;
  before(async () => {
    const serving = ca.sign('localhost', [], 'server');
    // Each answer comes after the number of ms its path names.
    server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => void setTimeout(() => res.end('ok'), Number((req.url ?? '/0').slice(1))));
    server.on('secureConnection', (socket) => {
      open++;
      opened++;
      socket.on('close', () => void open--);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  const get = async (pool: ReturnType<typeof createConnectionPool>, ms: number): Promise<string> =>
    (await httpsGet(`https://localhost:${port}/${ms}`, { agent: pool.agentFor({ ca: ca.cert }) })).body;
  const until = async (check: () => boolean, what: string): Promise<void> => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(check(), what);
  };

  it('opens at most its bound; a raised bound lets later requests open more; idle connections close, busy ones stay', async () => {
    opened = 0;
    const pool = createConnectionPool(2, 300);
    // A first wave of six slow requests: two connections, the other requests wait for them.
    const first = Array.from({ length: 6 }, () => get(pool, 150));
    await until(() => opened === 2, 'two connections opened');
    assert.equal(pool.queued(), 4, 'the other four wait for a connection');
    assert.deepEqual(await Promise.all(first), Array(6).fill('ok'));
    assert.equal(pool.queued(), 0);
    assert.equal(opened, 2, 'no more than the bound');

    pool.setMaxSockets(4);
    const second = Array.from({ length: 8 }, () => get(pool, 150));
    await until(() => open === 4, 'four connections open under the raised bound');
    assert.deepEqual(await Promise.all(second), Array(8).fill('ok'));
    assert.equal(opened, 4, 'two more opened, the first two reused');

    // An answer slower than the idle time keeps its connection; the free ones close.
    const slow = get(pool, 700);
    await until(() => open === 1, 'the idle connections closed');
    assert.equal(await slow, 'ok', 'the connection in use was not closed under its request');
    await until(() => open === 0, 'and it closes once idle too');
  });

  it('names its connections without the certificates, and still verifies the server by them', async () => {
    const pool = createConnectionPool(2, 300);
    const agent = pool.agentFor({ ca: ca.cert });
    const answer = get(pool, 200);
    await until(() => Object.keys(agent.sockets).length === 1, 'a connection in use');
    // node's agent names a connection group after its TLS options; with the CA among them that
    // name, built three times a request, would hold the whole certificate.
    const [name] = Object.keys(agent.sockets);
    assert.ok(!name!.includes('BEGIN CERTIFICATE'), `the group's name carries the CA: ${name!.slice(0, 80)}…`);
    assert.equal(await answer, 'ok');

    // A pool trusting another CA does not reach this server.
    const other = createConnectionPool(2, 300).agentFor({ ca: makeCA('another-ca').cert });
    await assert.rejects(httpsGet(`https://localhost:${port}/0`, { agent: other }), /self.signed|unable to verify|certificate/i);
    other.destroy();
    agent.destroy();
  });
});
