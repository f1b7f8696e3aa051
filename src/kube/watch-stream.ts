import type { IncomingMessage } from 'node:http';
import http from 'node:http';
import https from 'node:https';
import { ApiException } from './api-exception.js';
import { DEFAULT_USER_AGENT, flatHeaders, queryString, requestHost, type ApiRequest } from './api-transport.js';
import type { ClusterAccess, PreparedRequest } from './cluster-access.js';
import type { WatchEventType, WatchHandle } from './list-watch.js';
import { withoutManagedFieldsText } from './managed-fields.js';

/**
 * Reads a stream of JSON values, one per line (a watch answer: `{"type":…,"object":…}\n`…), as
 * it arrives in chunks: a line cut between two chunks waits for its end, several lines in one
 * chunk are each handed over, blank lines are skipped, and a line that is not JSON is dropped
 * (as client-node's Watch drops it). `end()` hands over a last line without its newline.
 * Chunks must be strings (decode the stream as UTF-8 first, so a character cut between two
 * chunks is whole). `rewrite`, when given, changes each line's text before it is parsed.
 */
export interface JsonLinesParser {
  push(chunk: string): void;
  end(): void;
}

export function createJsonLinesParser(onValue: (value: unknown) => void, rewrite?: (text: string) => string): JsonLinesParser {
  let rest = '';
  const line = (text: string): void => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(rewrite === undefined ? text : rewrite(text));
    } catch {
      return;
    }
    onValue(value);
  };
  return {
    push(chunk) {
      let start = 0;
      let newline = chunk.indexOf('\n');
      if (newline < 0) {
        rest += chunk;
        return;
      }
      // The first line of the chunk ends what the previous chunks left open.
      line(rest + chunk.slice(0, newline));
      rest = '';
      start = newline + 1;
      while ((newline = chunk.indexOf('\n', start)) >= 0) {
        line(chunk.slice(start, newline));
        start = newline + 1;
      }
      rest = chunk.slice(start);
    },
    end() {
      const last = rest;
      rest = '';
      line(last);
    },
  };
}

export interface WatchRequest {
  /** The collection's API path, e.g. `/api/v1/pods`. */
  path: string;
  /** Its query besides `watch=true`. */
  query: ApiRequest['query'];
  /** Each event, as it arrives: the type as the API server wrote it, and the object (a Status for ERROR). */
  onEvent: (type: WatchEventType, object: unknown) => void;
  /** Called once: null when the server ended the stream, the error otherwise (an `ApiException` for a refused request). */
  done: (err: unknown) => void;
  /** Objects arrive without `metadata.managedFields`, cut from the text before it is parsed (src/kube/managed-fields.ts). */
  withoutManagedFields?: boolean;
}

/**
 * Opens one watch request (src/kube/list-watch.ts's contract, as client-node's `Watch` kept
 * it): resolves once the answer's status is known, after calling `done` if the request was
 * refused or could not be sent; then calls `onEvent` for each event and `done` once when the
 * stream ends. `abort()` closes the connection (`done` then gets an AbortError, as with
 * client-node). The socket gets TCP keep-alive probes every 30 s, as client-node set them.
 */
export function startWatch(access: ClusterAccess, request: WatchRequest): Promise<WatchHandle> {
  let finished = false;
  const done = (err: unknown): void => {
    if (finished) return;
    finished = true;
    request.done(err);
  };
  let req: http.ClientRequest | undefined;
  let aborted = false;
  const handle: WatchHandle = {
    abort() {
      aborted = true;
      req?.destroy(Object.assign(new Error('the watch was aborted'), { name: 'AbortError' }));
    },
  };
  return (async (): Promise<WatchHandle> => {
    let prepared: PreparedRequest;
    try {
      prepared = await access.prepareWatch();
    } catch (err) {
      done(err);
      return handle;
    }
    const { server } = access;
    const target = `${access.basePath}${request.path}${queryString({ watch: 'true', ...request.query })}`;
    const send = server.protocol === 'https:' ? https.request : http.request;
    return new Promise<WatchHandle>((resolve) => {
      const settle = (err?: unknown): void => {
        if (err !== undefined) done(err);
        resolve(handle);
      };
      try {
        req = send({ agent: prepared.agent, protocol: server.protocol, hostname: requestHost(server), port: server.port || undefined, method: 'GET', path: target, headers: { accept: 'application/json', 'user-agent': DEFAULT_USER_AGENT, ...lower(prepared.headers) } });
      } catch (err) {
        settle(err);
        return;
      }
      if (aborted) req.destroy(Object.assign(new Error('the watch was aborted'), { name: 'AbortError' }));
      req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
      req.on('error', (err) => settle(err));
      req.on('response', (res: IncomingMessage) => {
        res.setEncoding('utf8');
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (chunk: string) => (text += chunk));
          const refuse = (): void => settle(new ApiException(res.statusCode ?? 0, res.statusMessage || http.STATUS_CODES[res.statusCode ?? 500] || 'Internal Server Error', text, flatHeaders(res.headers)));
          res.on('end', refuse);
          res.on('error', refuse);
          return;
        }
        const parser = createJsonLinesParser((value) => {
          const event = value as { type?: unknown; object?: unknown } | null;
          if (finished || typeof event !== 'object' || event === null || typeof event.type !== 'string') return;
          request.onEvent(event.type as WatchEventType, event.object);
        }, request.withoutManagedFields === true ? withoutManagedFieldsText : undefined);
        res.on('data', (chunk: string) => parser.push(chunk));
        res.on('end', () => {
          parser.end();
          done(null);
        });
        res.on('error', (err) => done(err));
        res.on('close', () => done(aborted ? Object.assign(new Error('the watch was aborted'), { name: 'AbortError' }) : null));
        resolve(handle);
      });
      req.end();
    });
  })();
}

const lower = (headers: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
