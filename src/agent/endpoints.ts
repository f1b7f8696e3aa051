import type { V1PodStatus } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { AgentConfig } from '../config/agent-config.js';
import { kpError } from '../errors.js';
import type { ApiClients } from '../kube/api-clients.js';
import type { Logger } from '../logger.js';
import type { PodManager } from '../pod/manager.js';
import type { Pod } from '../pod/types.js';
import { configzRoute } from '../server/configz.js';
import { containerLogsRoute } from '../server/container-logs.js';
import { healthzRoute } from '../server/healthz.js';
import { createKubeletAuth } from '../server/kubelet-auth.js';
import { metricsRoute } from '../server/metrics.js';
import { podsRoute } from '../server/pods.js';
import { resourceMetricsRoute } from '../server/resource-metrics.js';
import { statsSummaryRoute } from '../server/stats-summary.js';
import { createAgentServer, type AgentServer, type BoundAddress, type Route } from '../server/server.js';
import type { NodeUsage } from '../status/node-usage.js';
import type { ContainerLogLine } from '../status/status-provider.js';
import type { Clock } from '../time/clock.js';

/** Listen ports that replace the configured ones (see AgentOptions.listenPorts). */
export interface ListenPorts {
  readOnly?: number;
  healthz?: number;
  kubelet?: number;
}

/** Where each endpoint listens, once started (`kubelet`: the authenticated HTTPS port). */
export interface BoundAddresses {
  readOnly?: BoundAddress;
  healthz?: BoundAddress;
  kubelet?: BoundAddress;
}

export interface AgentEndpointsOptions {
  config: AgentConfig;
  listenPorts?: ListenPorts;
  podManager: Pick<PodManager, 'getPods' | 'getPodByName'>;
  /** The node's metrics registry, made at the first scrape. */
  registry: () => Registry;
  /** The status `/pods` shows for a pod (the status writer's); undefined: the pod as stored. */
  statusFor: (pod: Pod) => V1PodStatus | undefined;
  /** The runtime's container logs, by the pod's own UID. */
  containerLogs: (uid: string, container: string) => readonly ContainerLogLine[] | undefined;
  /** The node's resource usage now (`/stats/summary`, `/metrics/resource`). */
  usage: () => NodeUsage;
  /** The clients the kubelet port's webhooks ask; undefined when standalone. */
  apis: Pick<ApiClients, 'authentication' | 'authorization'> | undefined;
  /**
   * Filled with each address as it is bound. The agent's: the Node reports the kubelet port,
   * and the Node is made before the endpoints (whose statuses depend on it through admission).
   */
  bound: BoundAddresses;
  clock: Clock;
  logger: Logger;
}

export interface AgentEndpoints {
  /** Binds every endpoint; one that fails lets go of the others and rejects. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The endpoints of every agent that serves no port (a fleet node without kubelet ports): one
 * object for all, which holds nothing of a node (docs/performance.md, "An empty node's pod machinery").
 */
const NO_ENDPOINTS: AgentEndpoints = Object.freeze({
  listen: async () => {},
  close: async () => {},
});

/**
 * The agent's endpoints: the read-only port (`/pods`, `/metrics`, `/metrics/resource`,
 * `/stats/summary`, `/healthz`), the healthz port, and the kubelet port (HTTPS, the kubelet's
 * authentication and authorization in front of those and `/configz`, `/containerLogs`).
 */
export function createAgentEndpoints(options: AgentEndpointsOptions): AgentEndpoints {
  const { config, podManager, registry, apis, bound, clock, logger } = options;
  const listenPort = (key: keyof ListenPorts, configured: number): number | undefined =>
    options.listenPorts !== undefined ? options.listenPorts[key] : configured > 0 ? configured : undefined;
  const readOnlyPort = listenPort('readOnly', config.readOnlyPort);
  const healthzPort = listenPort('healthz', config.healthzPort);
  const wantedKubeletPort = listenPort('kubelet', config.port);
  const kubeletPort = wantedKubeletPort !== undefined && webhooksAnswerable(config, apis, logger) ? wantedKubeletPort : undefined;
  if (readOnlyPort === undefined && healthzPort === undefined && kubeletPort === undefined) return NO_ENDPOINTS;

  // Made for a port that listens only: a fleet node without ports holds no route.
  const podsWithStatus = (): Route => podsRoute({ podManager, statusFor: options.statusFor });
  // Both ports serve them, as the kubelet's do (pkg/kubelet/server, InstallAuthNotRequiredHandlers).
  const usageRoutes = (): Route[] => [resourceMetricsRoute({ nodeName: config.nodeName, usage: options.usage }), statsSummaryRoute({ nodeName: config.nodeName, usage: options.usage })];
  const servers: { readOnly?: AgentServer; healthz?: AgentServer; kubelet?: AgentServer } = {};
  if (readOnlyPort !== undefined) {
    servers.readOnly = createAgentServer({
      address: config.address,
      port: readOnlyPort,
      setting: '--read-only-port or readOnlyPort',
      routes: [healthzRoute(), podsWithStatus(), metricsRoute({ registry }), ...usageRoutes()],
    });
  }
  if (healthzPort !== undefined) {
    servers.healthz = createAgentServer({
      address: config.healthzBindAddress,
      port: healthzPort,
      setting: '--healthz-port or healthzPort',
      routes: [healthzRoute()],
    });
  }

  // Made at listen: its certificate is read (or made) then. The certificate code (node-forge,
  // a quarter of the agent's bundle) is loaded only by an agent that serves this port.
  async function createKubeletServer(port: number): Promise<AgentServer> {
    const { loadServingTLS } = await import('../server/serving-cert.js');
    const tls = await loadServingTLS({
      ...(config.tlsCertFile !== undefined ? { certFile: config.tlsCertFile } : {}),
      ...(config.tlsPrivateKeyFile !== undefined ? { keyFile: config.tlsPrivateKeyFile } : {}),
      ...(config.clientCAFile !== undefined ? { clientCAFile: config.clientCAFile } : {}),
      nodeName: config.nodeName,
      addresses: [config.address, config.nodeIP],
    });
    return createAgentServer({
      address: config.address,
      port,
      setting: '--port or port',
      tls,
      logger,
      guard: createKubeletAuth({
        nodeName: config.nodeName,
        x509: config.clientCAFile !== undefined,
        ...(config.authenticationTokenWebhook && apis !== undefined ? { tokenReviews: apis.authentication } : {}),
        tokenCacheTTLMs: config.authenticationWebhookCacheTTLMs,
        anonymous: config.anonymousAuth,
        authorization: config.authorizationMode === 'Webhook' && apis !== undefined ? apis.authorization : 'AlwaysAllow',
        authorizedCacheTTLMs: config.authorizationWebhookCacheAuthorizedTTLMs,
        unauthorizedCacheTTLMs: config.authorizationWebhookCacheUnauthorizedTTLMs,
        clock,
        logger,
      }),
      routes: [
        healthzRoute(),
        podsWithStatus(),
        metricsRoute({ registry }),
        ...usageRoutes(),
        configzRoute({ config }),
        containerLogsRoute({ podManager, logsFor: options.containerLogs, now: () => clock.now() }),
      ],
    });
  }

  const closeAll = async (): Promise<void> => {
    await Promise.allSettled([servers.readOnly?.close(), servers.healthz?.close(), servers.kubelet?.close()]);
  };
  return {
    async listen() {
      // A port that is taken fails the start, and the ports already bound are let go, so a
      // failed start leaves nothing open.
      try {
        if (servers.readOnly) bound.readOnly = await servers.readOnly.listen();
        if (servers.healthz) bound.healthz = await servers.healthz.listen();
        if (kubeletPort !== undefined) {
          servers.kubelet = await createKubeletServer(kubeletPort);
          bound.kubelet = await servers.kubelet.listen();
        }
      } catch (err) {
        await Promise.all([servers.readOnly?.close(), servers.healthz?.close(), servers.kubelet?.close()]);
        throw err;
      }
    },
    close: closeAll,
  };
}

/**
 * Standalone, nobody can answer a TokenReview or SubjectAccessReview: rather than refuse every
 * request, the kubelet port stays closed, with a warning (the kubelet refuses to start instead).
 */
function webhooksAnswerable(config: AgentConfig, apis: unknown, logger: Logger): boolean {
  const webhooks = config.authenticationTokenWebhook || config.authorizationMode === 'Webhook';
  if (!webhooks || apis !== undefined) return true;
  logger.warn(
    {
      err: kpError('KP_ERR_SERVER_NO_API', [
        [
          ...(config.authorizationMode === 'Webhook' ? ['authorization.mode Webhook'] : []),
          ...(config.authenticationTokenWebhook ? ['authentication.webhook.enabled'] : []),
        ],
      ]),
    },
    'kubelet port off: its webhooks need an API server',
  );
  return false;
}
