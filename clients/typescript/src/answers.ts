/**
 * The answer objects the service sends: the same fields `tollgate guard
 * --json`, `report --json`, `status --json` and `epoch show --json` print.
 * `ANSWER_FIELDS` lists each object's fields at run time, checked at compile
 * time to name every declared field and by the tests against the server's
 * OpenAPI document, so the client cannot drift from the server.
 */

/** The policy decision's explanation, on the call that made it. */
export type RuleExplanation = Record<string, unknown>;

/** A guard's answer: a permit to act now, or the key's state. */
export interface GuardAnswer {
  /** The key as given (logical, or `hsr1:<epoch>:<logical>`). */
  key: string;
  /** The destination's key: hand it to the provider as its own idempotency key. */
  logical_key: string;
  /** The epoch the key names ("" for a bare logical key). */
  epoch: string;
  /** Hex SHA-256 of the canonical payload. */
  payload_sha256: string;
  /** The key's state (executing, pending, succeeded, ...). */
  state: string;
  /** permitted, retry-later, denied, uncertain, settled. */
  verdict: string;
  /** True when this call created nothing: an earlier call stored what it reports. */
  replayed: boolean;
  /** True when the key has ended and a new reviewed operation under a new key is the way on. */
  safe_new_key: boolean;
  /** The policy mode applied, on the call that evaluated it. */
  policy?: string;
  /** The permit, only on the answer that issued it to this caller. */
  permit_id?: string;
  /** When the permit's lease ends (RFC 3339). */
  lease_until?: string;
  /** When an approval request expires (RFC 3339). */
  approval_expires_at?: string;
  /** The quorum an approval request needs. */
  approvers?: number;
  /** The rule that decided, on the call that evaluated it. */
  rule?: RuleExplanation;
  /** Why the key is where it is. */
  reason?: string;
  /** The operators file the ledger enforces. */
  authority: string;
  /** The exit code `tollgate guard` would have ended with. */
  exit_code: number;
}

/** A report's answer. */
export interface ReportAnswer {
  key: string;
  state: string;
  outcome: string;
  /** True when this exact report was already stored. */
  replayed: boolean;
  /** True when the report came after the lease or after reconciliation: kept as evidence only. */
  late: boolean;
  /** True when a late report contradicts the reconciliation. */
  disagrees_with_reconciliation: boolean;
  safe_new_key: boolean;
  exit_code: number;
}

/** What the ledger knows about a key (`tollgate status --json`). */
export interface StatusAnswer {
  key: string;
  logical_key: string;
  epoch: string;
  state: string;
  payload_sha256: string;
  retained: boolean;
  redacted: boolean;
  kind: string;
  agent: string;
  recorded_at?: string;
  policy?: string;
  policy_pattern?: string;
  rule?: RuleExplanation;
  context?: unknown;
  approval_requested_at?: string;
  approval_expires_at?: string;
  decision?: Record<string, unknown>;
  votes: Array<Record<string, unknown>> | null;
  approvers?: number;
  permit_id?: string;
  permit_issued_at?: string;
  lease_until?: string;
  permit_holder?: string;
  reports: Array<Record<string, unknown>> | null;
  reconciliation?: Record<string, unknown>;
  conflicts: number;
  flagged_disagreement: boolean;
  safe_new_key: boolean;
  forged?: string[];
  archive_id?: number;
  archive_file?: string;
  authority: string;
}

/** The active operator epoch (`tollgate epoch show --json`). */
export interface EpochAnswer {
  /** The epoch's UUID; "" when none was activated. */
  epoch: string;
  /** False when no epoch was ever activated. */
  active: boolean;
  operator: string;
  activated_at: string;
}

/** Who the service takes the caller for. */
export interface WhoamiAnswer {
  /** The agent name calls act under by default. */
  name: string;
  /** agent or operator. */
  scope: string;
}

/** A list of T's keys that is a compile error unless it names every one. */
type AllKeys<T, L extends readonly (keyof T)[]> = Exclude<keyof T, L[number]> extends never ? L : never;

function fields<T>() {
  return <const L extends readonly (keyof T)[]>(l: AllKeys<T, L>): L => l;
}

/** Each answer object's field names, as this client reads them. */
export const ANSWER_FIELDS = {
  guard: fields<GuardAnswer>()([
    "key", "logical_key", "epoch", "payload_sha256", "state", "verdict", "replayed", "safe_new_key", "policy", "permit_id",
    "lease_until", "approval_expires_at", "approvers", "rule", "reason", "authority", "exit_code",
  ]),
  report: fields<ReportAnswer>()(["key", "state", "outcome", "replayed", "late", "disagrees_with_reconciliation", "safe_new_key", "exit_code"]),
  status: fields<StatusAnswer>()([
    "key", "logical_key", "epoch", "state", "payload_sha256", "retained", "redacted", "kind", "agent", "recorded_at", "policy",
    "policy_pattern", "rule", "context", "approval_requested_at", "approval_expires_at", "decision", "votes", "approvers", "permit_id",
    "permit_issued_at", "lease_until", "permit_holder", "reports", "reconciliation", "conflicts", "flagged_disagreement", "safe_new_key",
    "forged", "archive_id", "archive_file", "authority",
  ]),
  epoch: fields<EpochAnswer>()(["epoch", "active", "operator", "activated_at"]),
  whoami: fields<WhoamiAnswer>()(["name", "scope"]),
} as const;
