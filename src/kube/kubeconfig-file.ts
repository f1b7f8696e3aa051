import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

export interface LoadedKubeConfig {
  kubeConfig: KubeConfig;
  /**
   * The current user's `token-file`, absolute, when its token comes from a file (and not an
   * inline `token`). client-node reads such a file once, at load; a projected ServiceAccount
   * token is rewritten by the kubelet before it expires, so the API clients read it again
   * (src/kube/token-file.ts).
   */
  tokenFile?: string;
}

interface RawKubeConfig {
  'current-context'?: string;
  contexts?: { name?: string; context?: { user?: string } }[];
  users?: { name?: string; user?: { token?: string; 'token-file'?: string } }[];
}

export function loadKubeConfigFile(path: string): LoadedKubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  const raw = parseYaml(readFileSync(path, 'utf8')) as RawKubeConfig | null;
  const contextName = kubeConfig.getCurrentContext();
  const userName = raw?.contexts?.find((c) => c.name === contextName)?.context?.user;
  const user = raw?.users?.find((u) => u.name === userName)?.user;
  if (user === undefined || user.token || !user['token-file']) return { kubeConfig };
  // Relative to the kubeconfig's folder, as kubectl resolves paths in a kubeconfig.
  return { kubeConfig, tokenFile: resolve(dirname(path), user['token-file']) };
}
