/**
 * This process's platform in Go's names, which Kubernetes uses in the `kubernetes.io/os` and
 * `kubernetes.io/arch` labels, in the Node's `nodeInfo` and in a client's User-Agent.
 */

/** Node.js architecture names → GOARCH. */
export function goArch(nodeArch: string): string {
  const map: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };
  return map[nodeArch] ?? nodeArch;
}

/** Node.js platform names → GOOS. */
export function goOS(nodePlatform: string): string {
  return nodePlatform === 'win32' ? 'windows' : nodePlatform;
}
