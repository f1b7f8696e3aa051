// A network namespace of the test's own, joined to the host by a veth pair on a /30, so that
// the API server can reach a node agent at a non-loopback address (it refuses to proxy to
// loopback node addresses) while no traffic leaves the machine: the host end gets .1, the
// namespace end .2. Needs root and `ip`.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface TestNetns {
  readonly name: string;
  /** The host end of the veth pair (root namespace). */
  readonly hostIP: string;
  /** The namespace end: the node's address. */
  readonly nsIP: string;
  /** Deletes the namespace (and with it both veth ends). Safe to call twice. */
  remove(): Promise<void>;
}

export async function createTestNetns(prefix = 'kp'): Promise<TestNetns> {
  const id = randomBytes(3).toString('hex');
  const name = `${prefix}-${id}`;
  // 10.251.0.0/16 split into /30s; a random one, so parallel runs do not meet.
  const block = randomBytes(2).readUInt16BE(0) & 0x3fff;
  const third = block >> 6;
  const fourth = (block & 0x3f) * 4;
  const hostIP = `10.251.${third}.${fourth + 1}`;
  const nsIP = `10.251.${third}.${fourth + 2}`;
  const hostEnd = `kph${id}`;
  const nsEnd = `kpn${id}`;
  const ip = (...args: string[]) => exec('ip', args);
  await ip('netns', 'add', name);
  let removed = false;
  const remove = async (): Promise<void> => {
    if (removed) return;
    removed = true;
    await ip('netns', 'del', name).catch(() => {});
    await ip('link', 'del', hostEnd).catch(() => {});
  };
  try {
    await ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd);
    await ip('link', 'set', nsEnd, 'netns', name);
    await ip('addr', 'add', `${hostIP}/30`, 'dev', hostEnd);
    await ip('link', 'set', hostEnd, 'up');
    await ip('netns', 'exec', name, 'ip', 'addr', 'add', `${nsIP}/30`, 'dev', nsEnd);
    await ip('netns', 'exec', name, 'ip', 'link', 'set', nsEnd, 'up');
    await ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
  } catch (err) {
    await remove();
    throw err;
  }
  return { name, hostIP, nsIP, remove };
}
