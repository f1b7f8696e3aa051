// A generator of random, valid static pod manifests for the differential suite: seeded and
// reproducible (the same seed and count give the same files), covering what static pods use —
// containers, init and sidecar containers, hostPath / emptyDir / downwardAPI / projected
// volumes, probes, lifecycle hooks, resources, security contexts, tolerations, host
// namespaces, DNS settings, restart policies, priority classes, YAML and JSON, with and
// without a namespace. Nothing references another API object (no Secret, ConfigMap,
// ServiceAccount, claim or RuntimeClass): the API server refuses such a mirror from a node.
//
// Every pod must also pass the kubelet's own admission on the hollow node (1 CPU, 3.75 GiB,
// no taints), or the kubelet would reject it and create no mirror: requests stay small, host
// ports are unique across all generated pods, and nothing needs AppArmor or node labels.

import { stringify } from 'yaml';

/** A small, fast, seeded PRNG (mulberry32): uniform floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Obj = Record<string, unknown>;

class Picker {
  constructor(readonly next: () => number) {}
  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  one<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  /** Up to `max` distinct elements, in their original order. */
  some<T>(xs: readonly T[], max = xs.length): T[] {
    const n = this.int(0, Math.min(max, xs.length));
    const chosen = new Set<number>();
    while (chosen.size < n) chosen.add(this.int(0, xs.length - 1));
    return [...chosen].sort((a, b) => a - b).map((i) => xs[i]!);
  }
}

export interface RandomManifest {
  /** `random-<index>.yaml` or `.json`. */
  file: string;
  /** The file's content. */
  text: string;
  /** The pod as written (before any defaulting). */
  pod: Obj;
  namespace: string;
  name: string;
}

export interface RandomPodsOptions {
  seed: number;
  count: number;
  /** The namespace most pods go to (it must exist); some have none, i.e. `default`. */
  namespace: string;
}

// Tagged, untagged, `latest` and digest references: the pull policy default depends on it.
const IMAGES = ['registry.k8s.io/pause:3.10', 'nginx:1.27', 'busybox', 'nginx:latest', 'registry.k8s.io/etcd:3.5.21-0', 'alpine@sha256:' + 'a'.repeat(64)];
const CPU_REQUESTS = ['1m', '2m', '5m'];
const CPU_LIMITS = ['10m', '100m', '1', '1500m'];
const MEMORY_REQUESTS = ['4Mi', '8Mi', '16Mi'];
const MEMORY_LIMITS = ['64Mi', '128Mi', '1Gi'];
const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'];
const FIELD_PATHS = ['metadata.name', 'metadata.namespace', "metadata.labels['app']", 'spec.nodeName', 'status.podIP', 'status.hostIP', 'status.podIPs'];

/** The manifests for a seed: `count` pods, each valid on its own and next to the others. */
export function randomManifests(options: RandomPodsOptions): RandomManifest[] {
  const pick = new Picker(seededRandom(options.seed));
  const out: RandomManifest[] = [];
  for (let i = 0; i < options.count; i++) out.push(randomManifest(pick, i, options.namespace));
  return out;
}

function randomManifest(pick: Picker, index: number, namespace: string): RandomManifest {
  const id = String(index).padStart(2, '0');
  const name = `random-${id}`;
  const withNamespace = pick.chance(0.8);
  const metadata: Obj = { name };
  if (withNamespace) metadata['namespace'] = namespace;
  const labels: Obj = {};
  if (pick.chance(0.7)) labels['app'] = pick.one(['web', 'db', 'cache', 'agent']);
  if (pick.chance(0.4)) labels['tier'] = pick.one(['control-plane', 'node']);
  if (pick.chance(0.2)) labels['example.com/owner'] = 'team-a';
  if (Object.keys(labels).length > 0) metadata['labels'] = labels;
  if (pick.chance(0.3)) metadata['annotations'] = { 'example.com/note': pick.one(['a', 'some text', '{"json": true}']) };
  if (pick.chance(0.1)) metadata['uid'] = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;

  const spec = randomSpec(pick, index);
  const pod: Obj = { apiVersion: 'v1', kind: 'Pod', metadata, spec };
  const json = pick.chance(0.25);
  const file = `${name}.${json ? 'json' : 'yaml'}`;
  // YAML 1.1 quoting: the kubelet reads manifests with YAML 1.1 rules, where `on` or `y`
  // are booleans.
  const text = json ? `${JSON.stringify(pod, null, 2)}\n` : stringify(pod, { version: '1.1' });
  return { file, text, pod, namespace: withNamespace ? namespace : 'default', name };
}

function randomSpec(pick: Picker, index: number): Obj {
  const spec: Obj = {};
  const hostNetwork = pick.chance(0.3);
  if (hostNetwork) spec['hostNetwork'] = true;
  if (pick.chance(0.15)) spec['hostPID'] = true;
  if (pick.chance(0.1)) spec['hostIPC'] = true;

  const volumes = randomVolumes(pick);
  if (volumes.length > 0) spec['volumes'] = volumes;
  const volumeNames = volumes.map((v) => v['name'] as string);

  // Ports unique across all generated pods: host-network pods use them on the host, and
  // the kubelet refuses a pod whose host port another pod holds.
  let nextPort = 20000 + index * 20;
  const port = (): number => nextPort++;

  const nContainers = pick.int(1, 3);
  const containers: Obj[] = [];
  for (let j = 0; j < nContainers; j++) containers.push(randomContainer(pick, `c${j}`, 'main', volumeNames, port));
  spec['containers'] = containers;
  const nInit = pick.chance(0.4) ? pick.int(1, 2) : 0;
  if (nInit > 0) {
    const init: Obj[] = [];
    for (let j = 0; j < nInit; j++) init.push(randomContainer(pick, `init${j}`, pick.chance(0.5) ? 'sidecar' : 'init', volumeNames, port));
    spec['initContainers'] = init;
  }

  if (pick.chance(0.6)) spec['restartPolicy'] = pick.one(['Always', 'OnFailure', 'Never']);
  if (pick.chance(0.5)) spec['terminationGracePeriodSeconds'] = pick.one([0, 1, 5, 30, 60]);
  if (pick.chance(0.1)) spec['activeDeadlineSeconds'] = pick.int(60, 86400);
  if (pick.chance(0.3)) spec['priorityClassName'] = pick.one(['system-node-critical', 'system-cluster-critical']);
  if (pick.chance(0.3)) {
    const policy = pick.one(hostNetwork ? ['Default', 'ClusterFirstWithHostNet', 'None'] : ['Default', 'ClusterFirst', 'None']);
    spec['dnsPolicy'] = policy;
    if (policy === 'None' || pick.chance(0.3)) {
      spec['dnsConfig'] = { nameservers: ['192.0.2.53'], searches: ['example.com'], options: [{ name: 'ndots', value: '2' }] };
    }
  }
  if (pick.chance(0.4)) spec['tolerations'] = randomTolerations(pick);
  if (pick.chance(0.4)) spec['securityContext'] = randomPodSecurityContext(pick);
  if (pick.chance(0.15)) spec['hostAliases'] = [{ ip: '192.0.2.10', hostnames: ['api.example.com', 'api'] }];
  if (!hostNetwork && pick.chance(0.15)) {
    spec['hostname'] = `host-${index}`;
    if (pick.chance(0.5)) spec['subdomain'] = 'static';
  }
  if (pick.chance(0.15)) spec['enableServiceLinks'] = false;
  if (pick.chance(0.15)) spec['automountServiceAccountToken'] = false;
  if (spec['hostPID'] !== true && pick.chance(0.1)) spec['shareProcessNamespace'] = true;
  if (pick.chance(0.15)) spec['os'] = { name: 'linux' };
  if (pick.chance(0.1)) spec['schedulerName'] = 'default-scheduler';
  return spec;
}

function randomVolumes(pick: Picker): Obj[] {
  const volumes: Obj[] = [];
  const n = pick.int(0, 4);
  for (let k = 0; k < n; k++) {
    const name = `v${k}`;
    const kind = pick.one(['hostPath', 'hostPath', 'emptyDir', 'downwardAPI', 'projected']);
    if (kind === 'hostPath') {
      const hostPath: Obj = { path: pick.one(['/etc/kubernetes/pki', '/var/log', '/var/lib/data', '/run/app.sock', '/dev/null']) };
      const type = pick.one(HOST_PATH_TYPES);
      if (type !== '' || pick.chance(0.3)) hostPath['type'] = type;
      volumes.push({ name, hostPath });
    } else if (kind === 'emptyDir') {
      const emptyDir: Obj = {};
      if (pick.chance(0.4)) emptyDir['medium'] = pick.one(['', 'Memory']);
      if (pick.chance(0.4)) emptyDir['sizeLimit'] = pick.one(['64Mi', '1Gi']);
      volumes.push({ name, emptyDir });
    } else {
      const items: Obj[] = [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }];
      if (pick.chance(0.5)) items.push({ path: 'name', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' }, mode: 0o444 });
      const source: Obj = { items };
      if (kind === 'downwardAPI') {
        if (pick.chance(0.3)) source['defaultMode'] = 0o420;
        volumes.push({ name, downwardAPI: source });
      } else {
        const projected: Obj = { sources: [{ downwardAPI: source }] };
        if (pick.chance(0.3)) projected['defaultMode'] = 0o440;
        volumes.push({ name, projected });
      }
    }
  }
  return volumes;
}

type ContainerRole = 'main' | 'init' | 'sidecar';

function randomContainer(pick: Picker, name: string, role: ContainerRole, volumeNames: readonly string[], port: () => number): Obj {
  const image = pick.one(IMAGES);
  const c: Obj = { name, image };
  if (role === 'sidecar') c['restartPolicy'] = 'Always';
  if (pick.chance(0.4)) c['imagePullPolicy'] = pick.one(['Always', 'IfNotPresent', 'Never']);
  if (pick.chance(0.4)) c['command'] = pick.one([['sleep', 'infinity'], ['/bin/sh', '-c'], ['run']]);
  if (pick.chance(0.3)) c['args'] = pick.one([['--v=2'], ['echo ready && sleep 3600'], ['--port=8080', '--flag']]);
  if (pick.chance(0.15)) c['workingDir'] = '/work';

  if (role !== 'init' && pick.chance(0.5)) {
    const ports: Obj[] = [];
    const n = pick.int(1, 2);
    for (let k = 0; k < n; k++) {
      const p: Obj = { containerPort: port() };
      if (pick.chance(0.5)) p['name'] = `p${name}-${k}`.slice(0, 15);
      if (pick.chance(0.3)) p['protocol'] = pick.one(['TCP', 'UDP', 'SCTP']);
      ports.push(p);
    }
    c['ports'] = ports;
  }
  if (pick.chance(0.4)) c['env'] = randomEnv(pick, name);
  if (pick.chance(0.6)) c['resources'] = randomResources(pick);

  if (role !== 'init') {
    if (pick.chance(0.35)) c['livenessProbe'] = randomProbe(pick, 'liveness');
    if (pick.chance(0.35)) c['readinessProbe'] = randomProbe(pick, 'readiness');
    if (pick.chance(0.2)) c['startupProbe'] = randomProbe(pick, 'startup');
    if (pick.chance(0.2)) c['lifecycle'] = randomLifecycle(pick);
  }
  if (pick.chance(0.4)) c['securityContext'] = randomContainerSecurityContext(pick);

  const mounts = pick.some(volumeNames, 3).map((v, k): Obj => {
    const m: Obj = { name: v, mountPath: `/mnt/${v}-${k}` };
    if (pick.chance(0.4)) m['readOnly'] = true;
    if (pick.chance(0.15)) m['subPath'] = 'sub';
    if (pick.chance(0.15)) m['mountPropagation'] = pick.one(['None', 'HostToContainer']);
    return m;
  });
  if (mounts.length > 0) c['volumeMounts'] = mounts;
  if (pick.chance(0.1)) c['terminationMessagePolicy'] = 'FallbackToLogsOnError';
  if (pick.chance(0.1)) c['terminationMessagePath'] = '/tmp/termination-log';
  if (pick.chance(0.05)) {
    c['stdin'] = true;
    c['tty'] = true;
  }
  return c;
}

function randomEnv(pick: Picker, container: string): Obj[] {
  const env: Obj[] = [{ name: 'MODE', value: pick.one(['prod', '', 'a=b']) }];
  if (pick.chance(0.6)) env.push({ name: 'POD_FIELD', valueFrom: { fieldRef: { fieldPath: pick.one(FIELD_PATHS) } } });
  if (pick.chance(0.4)) {
    const ref: Obj = { resource: pick.one(['limits.cpu', 'requests.memory', 'limits.memory']) };
    if (pick.chance(0.5)) ref['containerName'] = container;
    if (pick.chance(0.3)) ref['divisor'] = ref['resource'] === 'limits.cpu' ? '1m' : '1Mi';
    env.push({ name: 'RESOURCE', valueFrom: { resourceFieldRef: ref } });
  }
  if (pick.chance(0.2)) env.push({ name: 'EXPANDED', value: '$(MODE)-x' });
  return env;
}

function randomResources(pick: Picker): Obj {
  const r: Obj = {};
  const requests: Obj = {};
  const limits: Obj = {};
  if (pick.chance(0.7)) requests['cpu'] = pick.one(CPU_REQUESTS);
  if (pick.chance(0.7)) requests['memory'] = pick.one(MEMORY_REQUESTS);
  // A limit without a request makes the request default to the limit, which must still fit
  // on the node: only small limits stand alone.
  if (pick.chance(0.5)) limits['cpu'] = requests['cpu'] !== undefined ? pick.one(CPU_LIMITS) : '10m';
  if (pick.chance(0.5)) limits['memory'] = requests['memory'] !== undefined ? pick.one(MEMORY_LIMITS) : '64Mi';
  if (Object.keys(requests).length > 0) r['requests'] = requests;
  if (Object.keys(limits).length > 0) r['limits'] = limits;
  return r;
}

function randomHandler(pick: Picker, allowGrpc: boolean): Obj {
  const kinds = allowGrpc ? ['exec', 'httpGet', 'tcpSocket', 'grpc'] : ['exec', 'httpGet', 'tcpSocket'];
  const kind = pick.one(kinds);
  if (kind === 'exec') return { exec: { command: pick.one([['true'], ['cat', '/tmp/healthy'], ['/bin/sh', '-c', 'test -f /ready']]) } };
  if (kind === 'httpGet') {
    const h: Obj = { port: pick.one([8080, 10257, 'http']) };
    if (pick.chance(0.7)) h['path'] = pick.one(['/healthz', '/livez', '/readyz?verbose']);
    if (pick.chance(0.3)) h['host'] = '127.0.0.1';
    if (pick.chance(0.3)) h['scheme'] = pick.one(['HTTP', 'HTTPS']);
    if (pick.chance(0.2)) h['httpHeaders'] = [{ name: 'X-Probe', value: 'kubelet' }];
    return { httpGet: h };
  }
  if (kind === 'tcpSocket') return { tcpSocket: pick.chance(0.3) ? { port: 2379, host: '127.0.0.1' } : { port: 2379 } };
  const g: Obj = { port: 2379 };
  if (pick.chance(0.5)) g['service'] = 'liveness';
  return { grpc: g };
}

function randomProbe(pick: Picker, kind: 'liveness' | 'readiness' | 'startup'): Obj {
  const p: Obj = randomHandler(pick, true);
  if (pick.chance(0.5)) p['initialDelaySeconds'] = pick.int(0, 30);
  if (pick.chance(0.5)) p['periodSeconds'] = pick.int(1, 30);
  if (pick.chance(0.4)) p['timeoutSeconds'] = pick.int(1, 15);
  if (pick.chance(0.4)) p['failureThreshold'] = pick.int(1, 24);
  // Liveness and startup probes must succeed once to count as passing.
  if (pick.chance(0.3)) p['successThreshold'] = kind === 'readiness' ? pick.int(1, 3) : 1;
  if (kind !== 'readiness' && pick.chance(0.15)) p['terminationGracePeriodSeconds'] = pick.int(1, 30);
  return p;
}

function randomLifecycle(pick: Picker): Obj {
  const l: Obj = {};
  if (pick.chance(0.5)) l['postStart'] = randomHandler(pick, false);
  if (pick.chance(0.7) || l['postStart'] === undefined) l['preStop'] = randomHandler(pick, false);
  return l;
}

function randomContainerSecurityContext(pick: Picker): Obj {
  const s: Obj = {};
  const privileged = pick.chance(0.2);
  if (privileged) s['privileged'] = true;
  else if (pick.chance(0.5)) s['allowPrivilegeEscalation'] = false;
  if (pick.chance(0.4)) s['readOnlyRootFilesystem'] = pick.chance(0.8);
  if (pick.chance(0.4)) s['runAsUser'] = pick.one([0, 1000, 65534]);
  if (pick.chance(0.3)) s['runAsGroup'] = pick.one([0, 1000]);
  if (pick.chance(0.3)) s['runAsNonRoot'] = s['runAsUser'] !== 0;
  if (pick.chance(0.4)) {
    const caps: Obj = {};
    if (pick.chance(0.7)) caps['drop'] = ['ALL'];
    if (pick.chance(0.5)) caps['add'] = pick.some(['NET_ADMIN', 'NET_BIND_SERVICE', 'SYS_TIME'], 2);
    s['capabilities'] = caps;
  }
  if (pick.chance(0.3)) s['seccompProfile'] = randomSeccomp(pick);
  if (pick.chance(0.1)) s['seLinuxOptions'] = { level: 's0:c123,c456' };
  return s;
}

function randomSeccomp(pick: Picker): Obj {
  const type = pick.one(['RuntimeDefault', 'Unconfined', 'Localhost']);
  return type === 'Localhost' ? { type, localhostProfile: 'profiles/audit.json' } : { type };
}

function randomPodSecurityContext(pick: Picker): Obj {
  const s: Obj = {};
  if (pick.chance(0.5)) s['runAsUser'] = pick.one([0, 1000]);
  if (pick.chance(0.3)) s['runAsGroup'] = 3000;
  if (pick.chance(0.3)) s['runAsNonRoot'] = s['runAsUser'] === 1000;
  if (pick.chance(0.4)) s['fsGroup'] = 2000;
  if (s['fsGroup'] !== undefined && pick.chance(0.5)) s['fsGroupChangePolicy'] = pick.one(['OnRootMismatch', 'Always']);
  if (pick.chance(0.3)) s['supplementalGroups'] = [4000, 4001];
  if (pick.chance(0.4)) s['seccompProfile'] = randomSeccomp(pick);
  return s;
}

function randomTolerations(pick: Picker): Obj[] {
  const out: Obj[] = [];
  const n = pick.int(1, 3);
  for (let k = 0; k < n; k++) {
    const kind = pick.one(['exists-all', 'exists-key', 'equal', 'noexecute']);
    if (kind === 'exists-all') out.push({ operator: 'Exists' });
    else if (kind === 'exists-key') out.push({ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' });
    else if (kind === 'equal') out.push({ key: 'dedicated', operator: 'Equal', value: 'infra', effect: pick.one(['NoSchedule', 'PreferNoSchedule']) });
    else out.push({ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: pick.int(0, 600) });
  }
  return out;
}
