import { kpError, type KubeletPodsError } from '../errors.js';
import type { Logger } from '../logger.js';
import { apiErrorInfo, apiFailureCause } from './api-error.js';

/** The registry codes of the agent's loops whose failures are API calls; each names its object, then the reason. */
export type ApiFailureCode =
  | 'KP_ERR_NODE_REGISTER'
  | 'KP_ERR_NODE_LEASE'
  | 'KP_ERR_STATUS_WRITE'
  | 'KP_ERR_STATUS_READ'
  | 'KP_ERR_EVENT_WRITE'
  | 'KP_ERR_SERVER_AUTHN'
  | 'KP_ERR_SERVER_AUTHZ';

export interface ApiFailure<C extends ApiFailureCode> {
  code: C;
  /** The object the call was about: the node name, the pod full name. */
  subject: string;
  /** The constant log message. */
  message: string;
  /** Further structured fields for the line (`pod`, `uid`, …). */
  fields?: object;
}

/**
 * Logs a failed API call of a loop that retries it, in the one shape every loop uses: a warning
 * with the HTTP status and Status reason as fields, and as `err` the registry error naming the
 * object, whose cause is the call's error stripped of response bodies and headers. Returns that
 * error for callers that also want to keep or count it.
 */
export function logApiFailure<C extends ApiFailureCode>(log: Logger, err: unknown, failure: ApiFailure<C>): KubeletPodsError {
  const { code: httpStatus, reason } = apiErrorInfo(err);
  const summary = httpStatus ? `HTTP ${httpStatus} ${reason}`.trim() : 'request failed';
  const error = kpError(failure.code as ApiFailureCode, [failure.subject, summary], { cause: apiFailureCause(err) });
  log.warn({ ...failure.fields, httpStatus, reason, errorCode: error.code, err: error }, failure.message);
  return error;
}
