// A node's own view, next to what it wrote to the API server: the static pods it holds, from
// its read-only port's /pods (the kubelet's and our agent's have the same shape).
import { createServer } from 'node:net';

/** A port on 127.0.0.1 free right now, for a node's read-only port. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The pods a node holds (`GET /pods` on its read-only port), by name. */
export async function readPods<T extends { metadata?: { name?: string } }>(port: number): Promise<Map<string, T>> {
  const response = await fetch(`http://127.0.0.1:${port}/pods`);
  if (!response.ok) throw new Error(`GET /pods on port ${port}: ${response.status}`);
  // A kubelet that holds no pod yet answers `"items": null` (a nil Go slice).
  const list = (await response.json()) as { items?: T[] | null };
  return new Map((list.items ?? []).map((p) => [p.metadata?.name ?? '', p]));
}
