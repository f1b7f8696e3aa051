/**
 * Starts many nodes with at most `limit` of them between their start and their registration.
 * Thousands of nodes started at once put every registration, status and Lease call on the wire
 * together; a starved API server then answers few within their deadlines, every expired call
 * costs more than an answered one, and no node gets Ready (docs/fleet.md, "At scale"). A node
 * that has registered makes only its periodic calls, so the next one may start.
 */
export interface BoundedStartOptions<T> {
  /** Nodes starting at once; 0 starts all of them at once. */
  limit: number;
  start(item: T): Promise<void>;
  /** Settles when the item no longer needs its slot (registered, or given up on). */
  settled(item: T): Promise<unknown>;
  /** Checked before each start: true ends the loop (the fleet is stopping). */
  stopped(): boolean;
}

/** Resolves once every item has been started (the last ones may still be registering). */
export async function startBounded<T>(items: Iterable<T>, o: BoundedStartOptions<T>): Promise<void> {
  const registering = new Set<Promise<void>>();
  for (const item of items) {
    while (o.limit > 0 && registering.size >= o.limit) await Promise.race(registering);
    if (o.stopped()) return;
    await o.start(item);
    if (o.limit === 0) continue;
    const slot: Promise<void> = o.settled(item).then(
      () => void registering.delete(slot),
      () => void registering.delete(slot),
    );
    registering.add(slot);
  }
}
