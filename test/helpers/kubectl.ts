// The real kubectl, for the tests that check what a user sees with it (`kubectl describe`,
// `kubectl logs`, `kubectl get --raw`). This machine's image ships kubectl and .ci/run checks
// for it, so a test that needs it fails with this message rather than skipping.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Runs `kubectl --kubeconfig <kubeconfig> …args` and resolves with its stdout. */
export async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  try {
    return (await execFileAsync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 30_000 })).stdout;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error('this test runs the real kubectl, which is not on PATH: install kubectl (any version from v1.28 on)', { cause: err });
    }
    throw err;
  }
}
