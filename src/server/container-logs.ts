import type { PodManager } from '../pod/manager.js';
import type { ContainerLogLine } from '../status/status-provider.js';
import { send, type Route } from './server.js';
import { podUID } from '../values/pod-format.js';

export interface ContainerLogsRouteOptions {
  podManager: Pick<PodManager, 'getPodByName'>;
  /** The status provider's `containerLogs`, by the pod's own UID. */
  logsFor: (uid: string, container: string) => readonly ContainerLogLine[] | undefined;
}

/**
 * `/containerLogs/{namespace}/{pod}/{container}`: what the runtime wrote for a container of a
 * pod the node runs, as plain text, one line each. This is where the API server's `pods/log`
 * (`kubectl logs`) lands for a pod on this node, so a mirror pod's logs are its static pod's.
 *
 * Query parameters, as the kubelet reads them: `tailLines` (the last n lines), `timestamps`
 * (each line prefixed with its RFC 3339 time and a space), `limitBytes` (at most that many
 * bytes), `sinceSeconds` (only lines that recent). `follow` is accepted but the answer ends with
 * the lines so far (the simulated runtime writes a line as a container starts, exits, restarts
 * or is stopped; see createSimulatedStatusProvider). A pod the node does not run, or
 * a container it does not have, is 404; malformed parameters are 400.
 */
export function containerLogsRoute(options: ContainerLogsRouteOptions & { now?: () => Date }): Route {
  const now = options.now ?? (() => new Date());
  return {
    path: '/containerLogs',
    prefix: true,
    handle: (req, res, path) => {
      const parts = path.slice('/containerLogs/'.length).split('/').map(decodePart);
      if (parts.length !== 3 || parts.some((p) => p === undefined || p === '')) {
        send(res, 400, 'text/plain; charset=utf-8', 'expected /containerLogs/{namespace}/{pod}/{container}\n');
        return;
      }
      const [namespace, name, container] = parts as [string, string, string];
      const pod = options.podManager.getPodByName(namespace, name);
      if (pod === undefined) {
        send(res, 404, 'text/plain; charset=utf-8', `pod ${JSON.stringify(name)} does not exist\n`);
        return;
      }
      const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? []), ...(pod.spec?.ephemeralContainers ?? [])];
      if (!containers.some((c) => c.name === container)) {
        send(res, 404, 'text/plain; charset=utf-8', `container ${JSON.stringify(container)} not found in pod ${JSON.stringify(name)}\n`);
        return;
      }
      const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
      const tailLines = nonNegative(query.get('tailLines'));
      const limitBytes = nonNegative(query.get('limitBytes'), 1);
      const sinceSeconds = nonNegative(query.get('sinceSeconds'), 1);
      if (tailLines === null || limitBytes === null || sinceSeconds === null) {
        send(res, 400, 'text/plain; charset=utf-8', 'tailLines must be >= 0, limitBytes and sinceSeconds >= 1\n');
        return;
      }
      const timestamps = query.get('timestamps') === 'true';
      let lines = options.logsFor(podUID(pod), container) ?? [];
      if (sinceSeconds !== undefined) {
        const from = now().getTime() - sinceSeconds * 1000;
        lines = lines.filter((l) => l.time.getTime() >= from);
      }
      if (tailLines !== undefined) lines = tailLines === 0 ? [] : lines.slice(-tailLines);
      let body = lines.map((l) => `${timestamps ? `${l.time.toISOString()} ` : ''}${l.text}\n`).join('');
      if (limitBytes !== undefined && Buffer.byteLength(body) > limitBytes) body = Buffer.from(body).subarray(0, limitBytes).toString();
      send(res, 200, 'text/plain; charset=utf-8', body);
    },
  };
}

function decodePart(p: string): string | undefined {
  try {
    return decodeURIComponent(p);
  } catch {
    return undefined;
  }
}

/** undefined when absent, null when malformed or below `min`. */
function nonNegative(raw: string | null, min = 0): number | undefined | null {
  if (raw === null) return undefined;
  if (!/^\d+$/.test(raw)) return null;
  const n = Number(raw);
  return n >= min ? n : null;
}
