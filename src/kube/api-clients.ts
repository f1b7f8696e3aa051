import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  ServerConfiguration,
  createConfiguration,
  type RequestContext,
} from '@kubernetes/client-node';
import type { RateLimiter } from './rate-limiter.js';

export interface ApiClients {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
}

/**
 * The typed API clients the agent uses, all behind one client-side rate limiter (the kubelet's
 * kubeAPIQPS/kubeAPIBurst apply to its whole client). client-node's own `makeApiClient` has no
 * hook for that, so the configuration is built here with a request middleware that waits for
 * a token before each request.
 */
export function createApiClients(kubeConfig: KubeConfig, limiter: RateLimiter): ApiClients {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kubeConfig },
    promiseMiddleware: [
      {
        pre: async (context: RequestContext) => {
          await limiter.acquire();
          return context;
        },
        post: async (response) => response,
      },
    ],
  });
  return {
    kubeConfig,
    core: new CoreV1Api(configuration),
    coordination: new CoordinationV1Api(configuration),
  };
}
