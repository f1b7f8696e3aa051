import http2, { constants, type ClientHttp2Session, type ClientHttp2Stream, type SecureClientSessionOptions } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http';

/** One exchange's answer, as the lean Lease client reads it. */
export interface H2Answer {
  status: number;
  text: string;
  headers: IncomingHttpHeaders;
}

/**
 * One HTTP/2 connection to the API server, opened on first use and again after it closed
 * (a GOAWAY when the API server restarts, a network error). Every request is a stream of it:
 * the requests started in one turn of the event loop leave in one socket write, and their
 * answers often arrive in one read, where HTTP/1.1 keep-alive needs a socket, a write and a
 * read for each. For the fleet's Lease renewals (100 a second at 1,000 nodes), that is where
 * the idle CPU went (docs/performance.md).
 */
export interface H2Session {
  /**
   * Sends one request; `onStarted` gets at once a handle that ends it (a deadline): a request
   * still waiting for a stream is dropped and rejected with the error, a sent one has its stream
   * destroyed.
   */
  request(method: string, path: string, headers: Record<string, string>, body: string | undefined, onStarted?: (request: H2Request) => void): Promise<H2Answer>;
  /** Requests sent and not answered yet (at most the server's stream limit) and those waiting for a stream. */
  pending(): { streams: number; waiting: number };
  close(): void;
}

/** One request of a session, for whoever must end it early. */
export interface H2Request {
  destroy(err: Error): void;
}

/**
 * Streams in flight before the server's SETTINGS say how many it takes: the minimum RFC 9113
 * recommends a server allow.
 */
const STREAMS_BEFORE_SETTINGS = 100;

// Headers HTTP/2 forbids (connection-specific); the others go through lower-cased.
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

export function createH2Session(origin: string, tls: SecureClientSessionOptions): H2Session {
  let session: ClientHttp2Session | undefined;
  // Streams are opened only while the server takes more: nghttp2 would queue the rest itself,
  // and ending one of its queued streams early (a deadline) scans that queue, so thousands of
  // expiring renewals cost time quadratic in the backlog (docs/fleet.md, "At scale"). Waiting requests
  // wait here instead, where dropping one costs nothing.
  let streamLimit = STREAMS_BEFORE_SETTINGS;
  let inFlight = 0;
  let waiting: Array<() => void> = [];
  let head = 0;
  // Waiting and not dropped: the queue keeps a dropped request's entry until it comes up.
  let waitingCount = 0;
  const open = (): ClientHttp2Session => {
    if (session !== undefined && !session.closed && !session.destroyed) return session;
    // Through the module object, so that what wraps http2.connect (the fleet bench's request
    // counter) sees these requests too.
    const s = http2.connect(origin, tls);
    streamLimit = STREAMS_BEFORE_SETTINGS;
    // A session error also fails its streams, whose callers see it; the next call reconnects.
    s.on('error', () => undefined);
    s.on('close', () => {
      if (session === s) session = undefined;
    });
    s.on('goaway', () => {
      if (session === s) session = undefined;
    });
    s.on('remoteSettings', (settings) => {
      if (session !== s) return;
      streamLimit = Math.max(1, settings.maxConcurrentStreams ?? STREAMS_BEFORE_SETTINGS);
      startWaiting();
    });
    // An idle session must not keep the process alive.
    s.unref();
    session = s;
    return s;
  };
  const startWaiting = (): void => {
    while (inFlight < streamLimit && head < waiting.length) {
      const next = waiting[head]!;
      head++;
      next();
    }
    // The queue's array is replaced once drained, so a long backlog does not stay allocated.
    if (head === waiting.length && head > 0) {
      waiting = [];
      head = 0;
    }
  };
  return {
    request(method, path, headers, body, onStarted) {
      return new Promise((resolve, reject) => {
        let stream: ClientHttp2Stream | undefined;
        // Waiting in the queue; a deadline meanwhile rejects it and leaves its entry to be skipped.
        let queued = false;
        onStarted?.({
          destroy(err) {
            if (stream !== undefined) stream.destroy(err);
            else if (queued) {
              queued = false;
              waitingCount--;
              reject(err);
            }
          },
        });
        const send = (): void => {
          const out: Record<string, string> = { [constants.HTTP2_HEADER_METHOD]: method, [constants.HTTP2_HEADER_PATH]: path };
          for (const [name, value] of Object.entries(headers)) {
            const lower = name.toLowerCase();
            if (!CONNECTION_HEADERS.has(lower)) out[lower] = value;
          }
          try {
            stream = open().request(out, { endStream: body === undefined });
          } catch (err) {
            session = undefined;
            reject(err);
            return;
          }
          inFlight++;
          const sent = stream;
          let status = 0;
          let answerHeaders: IncomingHttpHeaders = {};
          let text = '';
          sent.setEncoding('utf8');
          sent.on('response', (h) => {
            status = Number(h[constants.HTTP2_HEADER_STATUS] ?? 0);
            answerHeaders = h as IncomingHttpHeaders;
          });
          sent.on('data', (chunk: string) => (text += chunk));
          sent.on('end', () => resolve({ status, text, headers: answerHeaders }));
          sent.on('error', reject);
          sent.on('close', () => {
            inFlight--;
            startWaiting();
            // A stream closed before its end (refused, reset, session gone) without an error event.
            if (status === 0) reject(Object.assign(new Error(`${method} ${path}: the HTTP/2 stream closed without an answer (code ${sent.rstCode})`), { code: 'ERR_HTTP2_STREAM_CLOSED' }));
          });
          if (body !== undefined) sent.end(body);
        };
        if (inFlight < streamLimit && waitingCount === 0) send();
        else {
          queued = true;
          waitingCount++;
          waiting.push(() => {
            if (!queued) return;
            queued = false;
            waitingCount--;
            send();
          });
        }
      });
    },
    pending: () => ({ streams: inFlight, waiting: waitingCount }),
    close() {
      session?.close();
      session = undefined;
    },
  };
}
