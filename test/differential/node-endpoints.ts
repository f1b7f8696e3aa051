// A node's own view, next to what it wrote to the API server: the static pods it holds, from
// its read-only port's /pods (the kubelet's and our agent's have the same shape).
import { createServer } from 'node:net';

import type { ApiObject } from './event-sequence.js';

/** A port on 127.0.0.1 free right now, for a node's read-only port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The pods a node holds (`GET /pods` on its read-only port), by name. */
export async function readPods(port: number): Promise<Map<string, ApiObject>> {
  const response = await fetch(`http://127.0.0.1:${port}/pods`);
  if (!response.ok) throw new Error(`GET /pods on port ${port}: ${response.status}`);
  const list = (await response.json()) as { items?: ApiObject[] };
  return new Map((list.items ?? []).map((p) => [p.metadata?.name ?? '', p]));
}
