import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP addresses and networks as Go's net package reads and prints them, and the rule for a pod
 * range: the configuration checks `--pod-cidr` and `--node-ip` with these, and the simulated
 * runtime hands out pod addresses with them.
 */

/**
 * The pod range when none is configured: the network container runtimes' default bridge
 * configuration uses (containerd's and Podman's `10.88.0.0/16`), with room for far more pods
 * than a node runs.
 */
export const DEFAULT_POD_CIDR = '10.88.0.0/16';

/** An IPv4 or IPv6 network. */
export interface Cidr {
  readonly family: 4 | 6;
  /** The network address (host bits cleared). */
  readonly network: bigint;
  readonly prefix: number;
  /** How many addresses the network spans. */
  readonly size: bigint;
}

const BITS = { 4: 32, 6: 128 } as const;

/** The smallest pod networks with room for one pod besides the reserved addresses. */
export const MAX_POD_CIDR_PREFIX = { 4: 30, 6: 126 } as const;

/** An IP address as a number and its family; undefined if `text` is not an IP address. */
export function parseIP(text: string): { family: 4 | 6; value: bigint } | undefined {
  if (isIPv4(text)) {
    return { family: 4, value: text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n) };
  }
  if (!isIPv6(text) || text.includes('%')) return undefined;
  let groups = text.toLowerCase();
  // A trailing dotted quad stands for the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(groups);
  if (dotted) {
    const v4 = parseIP(dotted[1]!)!.value;
    groups = `${groups.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = groups.split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headParts.length - tailParts.length;
  const parts = [...headParts, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailParts];
  return { family: 6, value: parts.reduce((acc, p) => (acc << 16n) | BigInt(parseInt(p, 16)), 0n) };
}

/**
 * The address in its canonical text: dotted quad, or RFC 5952 for IPv6 (lower case, the longest
 * run of two or more zero groups as `::`), as Go prints it and the API server expects it.
 */
export function formatIP(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.length < 2) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}

/** Parses `a.b.c.d/n` or `x::/n`; host bits are cleared, as Go's ParseCIDR does. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.lastIndexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIP(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (ip === undefined || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  const bits = BITS[ip.family];
  if (prefix > bits) return undefined;
  const size = 1n << BigInt(bits - prefix);
  return { family: ip.family, network: ip.value - (ip.value % size), prefix, size };
}

/** Why `text` cannot be a pod CIDR, or undefined when it can. */
export function podCidrProblem(text: string): string | undefined {
  const cidr = parseCidr(text);
  if (cidr === undefined) return `must be a CIDR such as 10.88.0.0/16, got ${JSON.stringify(text)}`;
  const max = MAX_POD_CIDR_PREFIX[cidr.family];
  if (cidr.prefix > max) return `must leave room for pod addresses (a prefix of at most /${max}), got ${JSON.stringify(text)}`;
  return undefined;
}

