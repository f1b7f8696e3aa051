// The IPC side of a benchmark child process (agent-child.ts, fleet-child.ts): the parent sends
// `{ id, op }`, the child answers `{ id, value }` or `{ id, error }`, and exits when the parent
// goes away.

export type ChildOps = Record<string, () => Promise<unknown> | unknown>;

export function serveChildOps(ops: ChildOps): void {
  process.on('message', (m: { id: number; op: string }) => {
    const op = ops[m.op];
    if (!op) return process.send?.({ id: m.id, error: `unknown op ${m.op}` });
    Promise.resolve()
      .then(() => op())
      .then(
        (value) => process.send?.({ id: m.id, value: value ?? null }),
        (err: Error) => process.send?.({ id: m.id, error: err.message }),
      );
  });
  process.on('disconnect', () => process.exit(0));
}
