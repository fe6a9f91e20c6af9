/**
 * The errors the client throws, one class per answer an agent acts on, under
 * the Python client's names. Each carries the server's answer object (the
 * fields `tollgate ... --json` prints), its exit code and the action key, so
 * an agent can log the key and decide without parsing messages. Messages
 * name keys, never payload bodies.
 */

/** An answer object as the server sent it (JSON). */
export type AnswerObject = Record<string, unknown>;

/** Base class of every error the client throws. */
export class TollgateError extends Error {
  /** The exit code of the `tollgate` command this class stands for. */
  static readonly code: number | undefined = undefined;
  /** The answer object: the problem document's members, or the 2xx body. */
  readonly answer: AnswerObject;
  /** The exit code the server gave (or this class's, when it gave none). */
  readonly exitCode: number | undefined;
  /** The action key, when the answer names one. */
  readonly key: string | undefined;
  /** The HTTP status of the answer, when there was one. */
  readonly status: number | undefined;
  /** The problem type (RFC 9457 `type`), when the answer was a problem. */
  readonly problemType: string | undefined;

  constructor(message: string, answer: AnswerObject = {}, exitCode?: number, status?: number, problemType?: string) {
    super(message);
    this.name = new.target.name;
    this.answer = { ...answer };
    const own = (new.target as unknown as { code?: number }).code;
    this.exitCode = exitCode ?? own;
    this.key = typeof this.answer.key === "string" ? this.answer.key : undefined;
    this.status = status;
    this.problemType = problemType;
  }
}

/** The input broke a rule (exit 3, or 2 for a usage mistake); nothing was stored. */
export class InvalidInput extends TollgateError {
  static override readonly code = 3;
}

/**
 * The key is bound to a different payload (exit 4, HTTP 422), or a report or
 * decision was already made otherwise (exit 4, HTTP 409): never an overwrite.
 */
export class KeyConflict extends TollgateError {
  static override readonly code = 4;
  /** The payload fields that differ (kind, target, body). */
  readonly differs: string[];
  /** The stored payload's digest. */
  readonly storedSha256: string | undefined;
  /** This call's payload's digest. */
  readonly attemptedSha256: string | undefined;
  /** The key's state. */
  readonly state: string | undefined;

  constructor(message: string, answer: AnswerObject = {}, exitCode?: number, status?: number, problemType?: string) {
    super(message, answer, exitCode, status, problemType);
    this.differs = Array.isArray(this.answer.differs) ? this.answer.differs.map(String) : [];
    this.storedSha256 = str(this.answer.stored_sha256);
    this.attemptedSha256 = str(this.answer.attempted_sha256);
    this.state = str(this.answer.state);
  }
}

/**
 * Policy denied the action, an operator rejected it, its approval expired, or
 * the key was fenced by a newer epoch (exit 5). `safeNewKey` is true when a
 * new, reviewed operation under a new key is the way on; `reason` says why.
 */
export class ActionDenied extends TollgateError {
  static override readonly code = 5;
  /** True when a new, reviewed operation under a new key is the way on. */
  readonly safeNewKey: boolean;
  /** Why the action was denied. */
  readonly reason: string | undefined;
  /** The key's state (rejected, expired, denied, fenced). */
  readonly state: string | undefined;

  constructor(message: string, answer: AnswerObject = {}, exitCode?: number, status?: number, problemType?: string) {
    super(message, answer, exitCode, status, problemType);
    this.safeNewKey = this.answer.safe_new_key === true;
    this.reason = str(this.answer.reason);
    this.state = str(this.answer.state);
  }
}

/**
 * A permit was issued and no outcome is confirmed (exit 6), or a report came
 * late. Nothing re-executes it: an operator reconciles the key. Do not retry
 * the action under a new key.
 */
export class OutcomeUncertain extends TollgateError {
  static override readonly code = 6;
}

/** No such key, permit or ledger (exit 7): a retry will not help. */
export class NotFound extends TollgateError {
  static override readonly code = 7;
}

/** The action already ran to a final outcome (exit 10): do not run it again. */
export class AlreadySettled extends TollgateError {
  static override readonly code = 10;
}

/**
 * The action waits for an operator, or another caller holds its permit (exit
 * 75). Exit and retry the same call later, with the same key and payload.
 * `expiresAt` is the approval deadline, `approvers` the quorum, `state` tells
 * pending from executing.
 */
export class ApprovalPending extends TollgateError {
  static override readonly code = 75;
  /** The approval deadline, when the action waits for one. */
  readonly expiresAt: Date | null;
  /** How many operators must approve. */
  readonly approvers: number;
  /** The key's state: pending, or executing under another caller's permit. */
  readonly state: string | undefined;
  /** Seconds the server asked the caller to wait (Retry-After), if it did. */
  readonly retryAfter: number | undefined;

  constructor(message: string, answer: AnswerObject = {}, exitCode?: number, status?: number, problemType?: string, retryAfter?: number) {
    super(message, answer, exitCode, status, problemType);
    this.expiresAt = parseTime(this.answer.approval_expires_at);
    this.approvers = typeof this.answer.approvers === "number" && this.answer.approvers > 0 ? this.answer.approvers : 1;
    this.state = str(this.answer.state);
    this.retryAfter = retryAfter;
  }
}

/**
 * The caller may not do this (exit 77): a key that is not its own, an agent
 * name it may not use, an operator's act without the operator's key.
 */
export class NotPermitted extends TollgateError {
  static override readonly code = 77;
}

/** The server accepted no credential from this client (HTTP 401): no token, or an unknown or revoked one. */
export class Unauthenticated extends NotPermitted {}

/**
 * The permit's lease ran out before the action started. Thrown by
 * `Permit.validateForExecution`: do not execute. Nothing is reported for the
 * key, since only an operator may settle a permit whose lease lapsed.
 */
export class LeaseLapsed extends TollgateError {}

/**
 * The ledger could not be reached, or stayed unavailable, for as long as the
 * call retried (exit 75 with `safe_to_repeat`). Nothing was recorded: repeat
 * the same call later.
 */
export class LedgerUnavailable extends TollgateError {
  static override readonly code = 75;
}

/**
 * The server did not confirm whether the last attempt's write committed (exit
 * 74, or an answer lost in transit after the request was sent). Ask `status`
 * before acting; repeating the same call is also safe, since every write is
 * idempotent and the retry carries the same attempt id.
 */
export class CommitUnknown extends TollgateError {
  static override readonly code = 74;
}

const byCode: Record<number, new (m: string, a?: AnswerObject, c?: number, s?: number, t?: string) => TollgateError> = {
  2: InvalidInput,
  3: InvalidInput,
  4: KeyConflict,
  5: ActionDenied,
  6: OutcomeUncertain,
  7: NotFound,
  10: AlreadySettled,
  74: CommitUnknown,
  75: ApprovalPending,
  77: NotPermitted,
};

/** The problem type of a 401 answer. */
export const PROBLEM_UNAUTHENTICATED = "urn:tollgate:problem:unauthenticated";

/**
 * The error for an answer: its exit code, its object, and the HTTP status and
 * problem type it came with. `what` names the call (guard, report, ...).
 */
export function errorFor(what: string, exitCode: number | undefined, answer: AnswerObject, status?: number, problemType?: string, retryAfter?: number): TollgateError {
  const key = str(answer.key);
  const why = str(answer.error) ?? str(answer.reason) ?? str(answer.state) ?? str(answer.detail) ?? "refused";
  const message = `tollgate ${what}${key ? " " + key : ""}: ${why}${exitCode !== undefined ? ` (exit ${exitCode})` : ""}`;
  if (problemType === PROBLEM_UNAUTHENTICATED || status === 401) {
    return new Unauthenticated(message, answer, exitCode ?? 77, status, problemType);
  }
  if (exitCode === 75 && answer.safe_to_repeat === true) {
    return new LedgerUnavailable(message, answer, exitCode, status, problemType);
  }
  if (exitCode === 75) {
    return new ApprovalPending(message, answer, exitCode, status, problemType, retryAfter);
  }
  const cls = exitCode === undefined ? undefined : byCode[exitCode];
  if (cls) return new cls(message, answer, exitCode, status, problemType);
  return new TollgateError(message, answer, exitCode, status, problemType);
}

/** An RFC 3339 time as a Date; null for none or Go's zero time. */
export function parseTime(v: unknown): Date | null {
  if (typeof v !== "string" || v === "" || v.startsWith("0001-01-01")) return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}
