/**
 * A MicroTime of the Kubernetes API (a Lease's `renewTime` and `acquireTime`, an Event's
 * `eventTime`): a Date written with six digits of fractions, as client-node 1.x's `V1MicroTime`
 * (which it replaces on the agent's path) writes it. `JSON.stringify` calls `toISOString`.
 */
export class V1MicroTime extends Date {
  override toISOString(): string {
    return `${super.toISOString().slice(0, -1)}000Z`;
  }
}
