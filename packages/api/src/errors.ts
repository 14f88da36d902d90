/**
 * Error kinds as plain tagged objects (class instances do not survive msgpackr; STYLE.md
 * "Errors"). Expected API outcomes are `metav1.Status` objects (see `k8s/meta.ts`); expected CRI
 * outcomes are {@link CriError}; broken invariants throw and crash the actor, ending the run.
 */

/**
 * `metav1.StatusReason` values podsim produces (apimachinery `pkg/apis/meta/v1/types.go`),
 * with the HTTP code each maps to.
 */
export const STATUS_REASON_CODES = {
  NotFound: 404,
  AlreadyExists: 409,
  Conflict: 409,
  Invalid: 422,
  Gone: 410,
  /** Watch / list from a resourceVersion older than the history (`NewResourceExpired`). */
  Expired: 410,
  BadRequest: 400,
  MethodNotAllowed: 405,
  NotAcceptable: 406,
  UnsupportedMediaType: 415,
  RequestEntityTooLarge: 413,
  TooManyRequests: 429,
  InternalError: 500,
  /** `NewServerTimeout` (e.g. a generateName collision on create). */
  ServerTimeout: 500,
  Timeout: 504,
  Forbidden: 403,
  /** The server cannot serve now (`podsim serve` shutting down, or its simulation failed). */
  ServiceUnavailable: 503,
} as const;
export type StatusReason = keyof typeof STATUS_REASON_CODES;

/** gRPC-style codes a CRI call may fail with (cri-api uses gRPC status codes). */
export type CriErrorCode = 'NotFound' | 'Unknown' | 'DeadlineExceeded' | 'Unavailable' | 'InvalidArgument' | 'FailedPrecondition';

/** A failed CRI call. */
export interface CriError {
  readonly code: CriErrorCode;
  readonly message: string;
}

/**
 * Why a run ended abnormally (the engine's own errors). Carries what the user needs to
 * reproduce it: the actor, the virtual time, the message kind and the seed.
 */
export interface RunFailure {
  readonly kind: 'ActorThrew' | 'HostDied' | 'HostUnresponsive' | 'InvalidConfig';
  readonly message: string;
  readonly actor?: string;
  readonly t?: number;
  readonly messageType?: string;
  readonly seed: number;
  readonly stack?: string;
}
