import { kpError } from '../errors.js';
import { isDNS1123Subdomain } from './dns-name.js';

/**
 * Node names: how the kubelet derives one from a host name, and the rule the API server holds
 * it to. The configuration, the fleet's templates and node registration all read these, so a
 * name refused at one door is refused, in the same words, at the others.
 */

/** The rule in words, for messages that name the field. */
export const NODE_NAME_RULE = "lower-case letters, digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit";

/** The node name the kubelet takes from a host name (or `--hostname-override`): trimmed, lower-cased. */
export function nodeNameFromHostname(hostname: string): string {
  return hostname.trim().toLowerCase();
}

/** Whether the API server accepts `name` for a Node: a DNS-1123 subdomain. */
export function isValidNodeName(name: string): boolean {
  return isDNS1123Subdomain(name);
}

/** Throws `KP_ERR_NODE_OPTIONS` naming `nodeName` unless `name` is a valid node name. */
export function validateNodeName(name: string): void {
  if (typeof name !== 'string' || !isValidNodeName(name)) {
    throw kpError('KP_ERR_NODE_OPTIONS', ['nodeName', JSON.stringify(String(name))]);
  }
}
