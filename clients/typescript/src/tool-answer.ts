/**
 * What a framework tool answers the model when tollgate did not let the
 * action run: pending, executing elsewhere, denied, settled, uncertain or a
 * key conflict, each a result the model reads and can act on (wait and call
 * again, stop, tell the user), never a crash of the agent's run.
 */
import { createHash } from "node:crypto";
import { canonicalJSON } from "./client.js";
import type { Body, Client, GuardContext, Payload, Permit, WithPermitOptions } from "./client.js";
import { ActionDenied, AlreadySettled, ApprovalPending, KeyConflict, OutcomeUncertain } from "./errors.js";

/** The result a guarded tool returns when its action did not run. */
export interface ToolRefusal {
  /** Always false: the action did not run on this call. */
  executed: false;
  /** Why: pending (an operator decides), executing (another call holds the permit), denied, settled, uncertain, conflict. */
  tollgate: "pending" | "executing" | "denied" | "settled" | "uncertain" | "conflict";
  /** The action's key. */
  key: string;
  /** What the model should do, in a sentence. */
  message: string;
  /** The approval deadline, when pending (RFC 3339). */
  approval_expires_at?: string;
  /** Why it was denied. */
  reason?: string;
  /** True when a new, reviewed operation under a new key is the way on. */
  safe_new_key?: boolean;
  /** The payload fields that differ from the key's stored payload. */
  differs?: string[];
}

/** The refusal the model reads for err, or undefined when err is not one of tollgate's answers (then it is re-thrown). */
export function toolRefusal(err: unknown, key: string): ToolRefusal | undefined {
  if (err instanceof ApprovalPending) {
    if (err.state === "executing") {
      return { executed: false, tollgate: "executing", key, message: "Another call holds the permit for this action and is running it. Do not run it again; check its outcome later." };
    }
    const at = err.expiresAt?.toISOString();
    return {
      executed: false,
      tollgate: "pending",
      key,
      message: `This action waits for an operator's approval${at ? ` (until ${at})` : ""}. It has not run. Call this tool again later with the same arguments; do not change them.`,
      ...(at ? { approval_expires_at: at } : {}),
    };
  }
  if (err instanceof ActionDenied) {
    return {
      executed: false,
      tollgate: "denied",
      key,
      message: `This action was denied${err.reason ? `: ${err.reason}` : ""}. It has not run and will not run under this key. Tell the user; do not retry it.`,
      ...(err.reason ? { reason: err.reason } : {}),
      safe_new_key: err.safeNewKey,
    };
  }
  if (err instanceof AlreadySettled) {
    return { executed: false, tollgate: "settled", key, message: "This action already ran to a final outcome earlier; it was not run again. Do not retry it." };
  }
  if (err instanceof OutcomeUncertain) {
    return { executed: false, tollgate: "uncertain", key, message: "An earlier run of this action has no confirmed outcome; an operator reconciles it. It was not run again. Do not retry it under other arguments." };
  }
  if (err instanceof KeyConflict) {
    return {
      executed: false,
      tollgate: "conflict",
      key,
      message: `This action's key was already used for different arguments (${err.differs.join(", ") || "payload"} differ). It has not run. Ask the user before doing anything else.`,
      differs: err.differs,
    };
  }
  return undefined;
}

/** How a framework tool names its action in the ledger. */
export interface GuardedToolOptions<I, R> {
  /** The tool's name, as the model sees it. */
  name: string;
  /** The action's kind, matched by policy; default `tool.<name>`. */
  kind?: string;
  /** Whom the action acts on, from its input. */
  target: string | ((input: I) => string);
  /** The action's key, from its input: the destination's stable business key. Default: the tool's name and the input's digest. */
  key?: (input: I) => string;
  /** The body recorded; default the canonical JSON of the input. */
  body?: (input: I) => Body;
  /** Context policy may read, from the input. */
  context?: (input: I) => GuardContext;
  /** Errors of these classes mean the action did not happen: reported failed. */
  failureTypes?: WithPermitOptions<R>["failureTypes"];
  /** Lease in seconds. */
  leaseSeconds?: number;
  /** What to store as the result on the succeeded report. */
  result?: (value: R) => string | undefined;
}

/** The default key of a tool call: `tool-<name>:<first 32 hex of the input's SHA-256>`. */
export function defaultToolKey(name: string, input: unknown): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40) || "tool";
  return `tool-${slug}:${createHash("sha256").update(canonicalJSON(input ?? null)).digest("hex").slice(0, 32)}`;
}

/** Runs run(permit) through client.withPermit for one tool call, and answers tollgate's refusals as the tool's result. */
export async function runGuarded<I, R>(client: Client, o: GuardedToolOptions<I, R>, input: I, run: (permit: Permit) => R | Promise<R>): Promise<R | ToolRefusal> {
  const key = o.key ? o.key(input) : defaultToolKey(o.name, input);
  const payload: Payload = {
    kind: o.kind ?? `tool.${o.name}`,
    target: typeof o.target === "function" ? o.target(input) : o.target,
    body: o.body ? o.body(input) : canonicalJSON(input ?? null),
  };
  // Only the guard's answers become refusals: an error the action itself
  // throws (even one of tollgate's, from a nested call) was reported and
  // goes back to the SDK.
  let ran = false;
  try {
    return await client.withPermit(key, payload, (permit) => {
      ran = true;
      return run(permit);
    }, {
      failureTypes: o.failureTypes,
      leaseSeconds: o.leaseSeconds,
      result: o.result,
      context: o.context?.(input),
    });
  } catch (err) {
    const refusal = ran ? undefined : toolRefusal(err, key);
    if (refusal) return refusal;
    throw err;
  }
}
