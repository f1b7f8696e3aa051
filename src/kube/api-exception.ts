/**
 * A failed API call, as client-node 1.x's `ApiException` is shaped (the same fields, the same
 * constructor and the same message), so that what reads a failure (src/kube/api-error.ts, the
 * loops' logs) cannot tell our client's from client-node's: `code` is the HTTP status, `body`
 * the answer as raw text (a Status in JSON; none for a 401), `headers` the answer's headers.
 * Its message embeds the body and the headers, as client-node's does; api-error.ts's
 * `apiFailureCause` strips both before anything logs it.
 */
export class ApiException<T = unknown> extends Error {
  readonly code: number;
  readonly body: T;
  readonly headers: Record<string, string>;

  constructor(code: number, message: string, body: T, headers: Record<string, string>) {
    super(`HTTP-Code: ${code}\nMessage: ${message}\nBody: ${JSON.stringify(body)}\nHeaders: ${JSON.stringify(headers)}`);
    this.code = code;
    this.body = body;
    this.headers = headers;
  }
}

/**
 * True for an `ApiException`, ours or client-node's (the fleet's set-up, the tests and users of
 * the library still build clients with client-node): an Error with a numeric `code`, a `body`
 * and `headers`. Transport errors carry a string `code` (`ECONNREFUSED`) and no body.
 */
export function isApiException(err: unknown): err is ApiException {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && 'body' in err && 'headers' in err;
}
