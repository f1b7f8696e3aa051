// The subcommands of the kubelet-pods command, in one table that the dispatcher (main.ts), its
// usage text and the docs check (test/unit/cli/documented-commands.test.ts) share. Each module
// is loaded only when it is asked for.

/** What every subcommand module exports. */
export interface SubcommandModule {
  /** Runs the subcommand with the arguments after its name; resolves with the exit code. */
  run(args: string[]): Promise<number>;
  /**
   * Checks the arguments the way `run` reads them (flags known, values present), without
   * acting on them; throws the error `run` would throw.
   */
  parse(args: readonly string[]): unknown;
  /** The flags it takes, with their dashes (`--help` included). */
  readonly flags: readonly string[];
}

export interface Subcommand {
  readonly summary: string;
  load(): Promise<SubcommandModule>;
}

export const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = Object.freeze({
  run: {
    summary: 'run the node agent: static pods from files and URLs, mirror pods in the API server',
    load: () => import('./run-command.js'),
  },
  fleet: {
    summary: 'run many simulated nodes with their static pods from one process (docs/fleet.md)',
    // The fleet's young generation is held at its starting size before its modules load (src/fleet/gc-settings.ts).
    load: async () => {
      (await import('../fleet/gc-settings.js')).holdYoungGeneration();
      return import('./fleet-command.js');
    },
  },
  demo: {
    summary: 'start a local control plane and the agent on examples/, with a live view (npm start)',
    load: () => import('./demo-command.js'),
  },
  'local-cluster': {
    summary: 'run a real kube-apiserver + etcd, kube-scheduler and kube-controller-manager on loopback with node credentials',
    load: () => import('./local-cluster-command.js'),
  },
});
