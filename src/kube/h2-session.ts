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
  /** Sends one request; `onStream` gets the stream, so a deadline can close it. */
  request(method: string, path: string, headers: Record<string, string>, body: string | undefined, onStream?: (stream: ClientHttp2Stream) => void): Promise<H2Answer>;
  close(): void;
}

// Headers HTTP/2 forbids (connection-specific); the others go through lower-cased.
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

export function createH2Session(origin: string, tls: SecureClientSessionOptions): H2Session {
  let session: ClientHttp2Session | undefined;
  const open = (): ClientHttp2Session => {
    if (session !== undefined && !session.closed && !session.destroyed) return session;
    // Through the module object, so that what wraps http2.connect (the fleet bench's request
    // counter) sees these requests too.
    const s = http2.connect(origin, tls);
    // A session error also fails its streams, whose callers see it; the next call reconnects.
    s.on('error', () => undefined);
    s.on('close', () => {
      if (session === s) session = undefined;
    });
    s.on('goaway', () => {
      if (session === s) session = undefined;
    });
    // An idle session must not keep the process alive.
    s.unref();
    session = s;
    return s;
  };
  return {
    request(method, path, headers, body, onStream) {
      return new Promise((resolve, reject) => {
        const out: Record<string, string> = { [constants.HTTP2_HEADER_METHOD]: method, [constants.HTTP2_HEADER_PATH]: path };
        for (const [name, value] of Object.entries(headers)) {
          const lower = name.toLowerCase();
          if (!CONNECTION_HEADERS.has(lower)) out[lower] = value;
        }
        let stream: ClientHttp2Stream;
        try {
          stream = open().request(out, { endStream: body === undefined });
        } catch (err) {
          session = undefined;
          reject(err);
          return;
        }
        onStream?.(stream);
        let status = 0;
        let answerHeaders: IncomingHttpHeaders = {};
        let text = '';
        stream.setEncoding('utf8');
        stream.on('response', (h) => {
          status = Number(h[constants.HTTP2_HEADER_STATUS] ?? 0);
          answerHeaders = h as IncomingHttpHeaders;
        });
        stream.on('data', (chunk: string) => (text += chunk));
        stream.on('end', () => resolve({ status, text, headers: answerHeaders }));
        stream.on('error', reject);
        // A stream closed before its end (refused, reset, session gone) without an error event.
        stream.on('close', () => {
          if (status === 0) reject(Object.assign(new Error(`${method} ${path}: the HTTP/2 stream closed without an answer (code ${stream.rstCode})`), { code: 'ERR_HTTP2_STREAM_CLOSED' }));
        });
        if (body !== undefined) stream.end(body);
      });
    },
    close() {
      session?.close();
      session = undefined;
    },
  };
}
