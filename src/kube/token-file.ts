import { readFile } from 'node:fs/promises';
import { kpError } from '../errors.js';

/** How long a token read from a file is used before the file is read again (client-go's period). */
export const TOKEN_FILE_REFRESH_MS = 60_000;

export interface TokenFile {
  /** The token, read again when the last read is older than the refresh period. */
  current(): Promise<string>;
}

/**
 * A bearer token kept in a file that its issuer rewrites, such as the projected ServiceAccount
 * token of a pod (replaced by the kubelet at 80 % of its lifetime). When a later read fails,
 * the last token is kept: the file being replaced is a brief window, and an expired token then
 * shows as a 401 naming the call, where an operator will look.
 */
export function createTokenFile(path: string, now: () => number = Date.now): TokenFile {
  let token: string | undefined;
  let readAt = -Infinity;
  let reading: Promise<string> | undefined;
  const read = async (): Promise<string> => {
    try {
      const text = (await readFile(path, 'utf8')).trim();
      if (text === '') throw new Error('the file is empty');
      token = text;
    } catch (err) {
      if (token === undefined) throw kpError('KP_ERR_CONFIG_KUBECONFIG', [`its token-file ${path} cannot be read: ${(err as Error).message}`]);
    }
    readAt = now();
    return token;
  };
  return {
    current() {
      if (token !== undefined && now() - readAt < TOKEN_FILE_REFRESH_MS) return Promise.resolve(token);
      reading ??= read().finally(() => {
        reading = undefined;
      });
      return reading;
    },
  };
}
