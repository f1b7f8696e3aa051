import { isStaticPod } from '../pod/classify.js';
import type { PodManager } from '../pod/manager.js';
import type { V1PodStatus } from '@kubernetes/client-node';
import { CONFIG_HASH_ANNOTATION_KEY, CONFIG_MIRROR_ANNOTATION_KEY } from '../constants.js';
import { podUID } from '../values/pod-format.js';

export interface LiveViewOptions {
  podManager: PodManager;
  /** The status published for a static pod (by its UID), if any. */
  statusFor?: (uid: string) => V1PodStatus | undefined;
  out?: NodeJS.WriteStream;
  /** Lines printed above the table (where to find the kubeconfig, how to stop). */
  header: readonly string[];
  /**
   * Lines drawn between the header and the table, after a blank line (the scheduler's view of
   * the node: scheduling-view.ts). The table stays the frame's last paragraph.
   */
  section?: () => readonly string[];
  refreshMs?: number;
}

const short = (s: string | undefined): string => (s ? s.slice(0, 8) : '-');

/**
 * Renders the static pods the agent holds, their mirror pods, UIDs, hashes and status as a
 * table. On a terminal it redraws in place; elsewhere it prints the table whenever it changes.
 */
export function renderTable(podManager: PodManager, statusFor?: (uid: string) => V1PodStatus | undefined): string[] {
  const rows = [['STATIC POD', 'NAMESPACE', 'UID/HASH', 'MIRROR UID', 'MIRROR HASH', 'IN SYNC', 'STATUS']];
  const statics = podManager
    .getPods()
    .filter(isStaticPod)
    .sort((a, b) => `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`));
  for (const pod of statics) {
    const mirror = podManager.getMirrorPodByPod(pod);
    const hash = pod.metadata?.annotations?.[CONFIG_HASH_ANNOTATION_KEY];
    const mirrorHash = mirror?.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY];
    const status = statusFor?.(podUID(pod)) ?? mirror?.status;
    rows.push([
      pod.metadata?.name ?? '',
      pod.metadata?.namespace ?? '',
      short(hash),
      short(mirror?.metadata?.uid),
      short(mirrorHash),
      mirror ? (mirrorHash === hash ? 'yes' : 'replacing') : 'creating',
      status?.phase ?? 'Pending',
    ]);
  }
  const orphans = podManager.getPodsAndMirrorPods().orphanedMirrorPodFullNames;
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  if (orphans.length > 0) lines.push('', `orphaned mirror pods (deleted once all sources are ready): ${[...orphans].sort().join(', ')}`);
  return lines;
}

export function startLiveView(options: LiveViewOptions): { stop(): void } {
  const out = options.out ?? process.stdout;
  let last = '';
  const draw = (): void => {
    const section = options.section?.() ?? [];
    const text = [...options.header, '', ...(section.length > 0 ? [...section, ''] : []), ...renderTable(options.podManager, options.statusFor)].join('\n');
    if (text === last) return;
    last = text;
    // On a terminal: clear the screen and draw at the top; elsewhere: append.
    out.write(out.isTTY ? `\x1b[H\x1b[2J${text}\n` : `${text}\n\n`);
  };
  draw();
  const timer = setInterval(draw, options.refreshMs ?? 500);
  return {
    stop: () => {
      clearInterval(timer);
      draw(); // the last state, so a script's output ends with what the agent left behind
    },
  };
}
