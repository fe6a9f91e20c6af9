/**
 * tollgate-guard: the TypeScript client of `tollgate serve`. An agent's
 * consequential action runs once, only with a permit, human-approved where
 * policy says so.
 *
 * @example
 * const client = new Client({ url: "unix:///run/tollgate/tollgate.sock" });
 * await client.withPermit("refund:le-4411", { kind: "refund.create", target: "customer:c-1", body: { amount: 40 } },
 *   (permit) => stripe.refunds.create({ amount: 40 }, { idempotencyKey: permit.destinationKey }));
 */
export { Client, Permit, canonicalJSON, newAttemptId } from "./client.js";
export type { Body, ClientOptions, ErrorClass, GuardContext, GuardOptions, Outcome, Payload, ReportOptions, WithPermitOptions } from "./client.js";
export { authorityKey, checkKey, MAX_KEY_LEN } from "./keys.js";
export { ANSWER_FIELDS } from "./answers.js";
export type { EpochAnswer, GuardAnswer, ReportAnswer, RuleExplanation, StatusAnswer, WhoamiAnswer } from "./answers.js";
export {
  ActionDenied,
  AlreadySettled,
  ApprovalPending,
  CommitUnknown,
  InvalidInput,
  KeyConflict,
  LeaseLapsed,
  LedgerUnavailable,
  NotFound,
  NotPermitted,
  OutcomeUncertain,
  TollgateError,
  Unauthenticated,
} from "./errors.js";
export type { AnswerObject } from "./errors.js";
export { toolRefusal, defaultToolKey } from "./tool-answer.js";
export type { ToolRefusal, GuardedToolOptions } from "./tool-answer.js";
