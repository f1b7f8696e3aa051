import { readKubeConfigFile, type KubeConfigFile } from './kubeconfig.js';

export interface LoadedKubeConfig {
  kubeConfig: KubeConfigFile;
  /**
   * The current user's `token-file`, absolute, when its token comes from a file (and not an
   * inline `token`). A projected ServiceAccount token is rewritten by the kubelet before it
   * expires, so the API clients read it again (src/kube/token-file.ts).
   */
  tokenFile?: string;
}

/**
 * Reads a kubeconfig with our own reader (src/kube/kubeconfig.ts), which does not load
 * client-node: exec plugins, auth providers and proxies are left to client-node, loaded by the
 * clients when they first send (src/kube/cluster-access.ts).
 */
export function loadKubeConfigFile(path: string): LoadedKubeConfig {
  const kubeConfig = readKubeConfigFile(path);
  return kubeConfig.tokenFile !== undefined ? { kubeConfig, tokenFile: kubeConfig.tokenFile } : { kubeConfig };
}
