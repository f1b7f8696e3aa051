import { isApiException } from './api-exception.js';
import { isAbortError } from './request-timeout.js';

/**
 * What the agent's loops need to know about a failed API call: the HTTP status and the
 * `reason` of the returned Status. Our client (src/kube/api-transport.ts), like client-node
 * 1.x, puts the Status in `body` as a raw JSON string, and the API server uses 409 both for
 * AlreadyExists and for a failed precondition (Conflict), so the reason is the only way to
 * tell those apart. Ours and client-node's `ApiException` read alike (`isApiException`).
 */
export interface ApiErrorInfo {
  /** HTTP status, or 0 when the request never got a response. */
  code: number;
  reason: string;
}

export function apiErrorInfo(err: unknown): ApiErrorInfo {
  if (isApiException(err)) {
    return { code: err.code, reason: statusReason(err.body) };
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number') {
    return { code, reason: statusReason((err as { body?: unknown }).body) };
  }
  return { code: 0, reason: '' };
}

function parseStatus(body: unknown): { reason?: unknown; message?: unknown; details?: { causes?: { field?: unknown }[] } } | null {
  if (typeof body !== 'string') return (body ?? null) as never;
  try {
    return JSON.parse(body) as never;
  } catch {
    return null;
  }
}

function statusReason(body: unknown): string {
  const reason = parseStatus(body)?.reason;
  return typeof reason === 'string' ? reason : '';
}

/**
 * True when a write carrying `metadata.uid` was refused because the object now has another
 * UID. The API server reports this as 422 Invalid with a `metadata.uid` cause ("field is
 * immutable") for patches, and as 409 Conflict for preconditions given in delete options.
 */
export function isUIDMismatch(err: unknown): boolean {
  const info = apiErrorInfo(err);
  if (info.code === 409 && info.reason === 'Conflict') return true;
  if (info.code !== 422 || !isApiException(err)) return false;
  const causes = parseStatus(err.body)?.details?.causes ?? [];
  return causes.some((c) => c.field === 'metadata.uid');
}

export const isNotFound = (err: unknown): boolean => apiErrorInfo(err).code === 404;
export const isAlreadyExists = (err: unknown): boolean => {
  const info = apiErrorInfo(err);
  return info.code === 409 && info.reason === 'AlreadyExists';
};
/** A failed precondition or an optimistic-concurrency conflict (409, reason Conflict). */
export const isConflict = (err: unknown): boolean => {
  const info = apiErrorInfo(err);
  return info.code === 409 && info.reason !== 'AlreadyExists';
};

export interface ApiStatusSummary {
  code: number | undefined;
  reason: string | undefined;
  message: string;
}

/**
 * The Status fields of a failed call, for error messages: an `ApiException`'s `message` embeds
 * the response body and headers, so only the Status's own message (or the HTTP code) is shown.
 */
export function apiStatusOf(err: unknown): ApiStatusSummary {
  if (isApiException(err)) {
    const status = parseStatus(err.body);
    const reason = typeof status?.reason === 'string' ? status.reason : undefined;
    const message = typeof status?.message === 'string' ? status.message : `HTTP ${err.code}`;
    return { code: err.code, reason, message };
  }
  return { code: undefined, reason: undefined, message: err instanceof Error ? err.message : String(err) };
}

/** An error that carries only the Status summary of a failed call, safe to attach as `cause`. */
export class ApiStatusError extends Error {
  readonly code: number | undefined;
  readonly reason: string | undefined;
  constructor(summary: ApiStatusSummary) {
    super(summary.message);
    this.name = 'ApiStatusError';
    this.code = summary.code;
    this.reason = summary.reason;
  }
}

/**
 * What may stand as the `cause` of a logged or raised error for a failed call: pino prints a
 * cause's message and stack, and an ApiException's message embeds the response body
 * and headers, so it is replaced by its Status summary. Transport errors (refused connection,
 * timeout) are kept as they are: their message is what tells an operator what went wrong.
 */
export function apiFailureCause(err: unknown): unknown {
  if (isApiException(err)) return new ApiStatusError(apiStatusOf(err));
  // A call abandoned at its deadline is named AbortError (src/kube/api-transport.ts).
  if (isAbortError(err)) return new Error('no answer from the API server within the request timeout (src/kube/request-timeout.ts)');
  return err;
}
