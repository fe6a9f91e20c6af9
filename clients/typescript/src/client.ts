/**
 * The client of `tollgate serve`: an agent's guard, report, status and epoch
 * calls over HTTP, each answer a value or one of the errors of errors.ts, and
 * `withPermit`, which runs an action only with a permit and reports its
 * outcome as the Python client's `with client.guard(...)` block does.
 *
 * The ledger, not this object, holds the state: an agent that crashes and
 * starts again asks the same questions and gets the same answers.
 */
import { randomBytes } from "node:crypto";
import type { EpochAnswer, GuardAnswer, ReportAnswer, StatusAnswer, WhoamiAnswer } from "./answers.js";
import {
  ApprovalPending,
  CommitUnknown,
  InvalidInput,
  LeaseLapsed,
  LedgerUnavailable,
  TollgateError,
  errorFor,
  parseTime,
  type AnswerObject,
} from "./errors.js";
import { checkKey } from "./keys.js";
import { TransportError, parseEndpoint, send, type Endpoint, type RawResponse } from "./transport.js";

/** A body is text; an object or array is sent as canonical JSON (sorted keys, no spaces). */
export type Body = string | Record<string, unknown> | unknown[];

/** What an action is: what it does (kind), to whom (target), with what (body). */
export interface Payload {
  /** What the action does, e.g. `refund.create`. */
  kind: string;
  /** Whom it acts on, e.g. `customer:c-1`. */
  target: string;
  /** Its arguments. */
  body: Body;
}

/** Context policy may read beside the payload: strings, numbers, booleans and lists of strings. */
export type GuardContext = Record<string, string | number | boolean | string[]>;

/** A guard call's options. */
export interface GuardOptions extends Payload {
  /** What policy may read beside the payload; bound to the key like the payload. */
  context?: GuardContext;
  /** How long the permit holder has to report, in seconds (the server's default when omitted). */
  leaseSeconds?: number;
  /** Keep the payload's digest only, never its text. */
  redact?: boolean;
  /** Act under this agent name (the caller's own when omitted; another only where an operator allowed it). */
  agent?: string;
  /**
   * The attempt id sent as `Tollgate-Attempt` on every try of this call. A
   * fresh random one by default; pass one you stored to have a call made
   * again after a crash given the permit its first try was issued.
   */
  attemptId?: string;
  /**
   * Like `tollgate guard --wait`: while the answer is ApprovalPending (an
   * operator has not decided, or another call holds the permit), ask again
   * for up to this many milliseconds, as often as the server's Retry-After
   * says (at least every second), before throwing it. Default 0: pending is
   * an answer, thrown at once.
   */
  waitMs?: number;
}

/** The outcomes a permit holder reports. */
export type Outcome = "succeeded" | "failed" | "unknown";

/** A report's options. */
export interface ReportOptions {
  /** A safe reference to the external effect (an id at the provider, never the body). */
  ref?: string;
  /** How long the action took, in milliseconds. */
  latencyMs?: number;
  /** What the action returned (at most 64 KiB), kept for a caller that lost its answer. */
  result?: string;
}

/** The client's options. */
export interface ClientOptions {
  /** The service: `unix:///path/to.sock`, `https://host:port`, or `http://127.0.0.1:port`. Default: TOLLGATE_URL. */
  url?: string;
  /** A bearer token (`tollgate agents token create NAME`). Default: TOLLGATE_TOKEN. */
  token?: string;
  /** The agent name calls act under when they name none. */
  agent?: string;
  /**
   * How long one call rides out connection failures, 503 and 429, in
   * milliseconds, before it throws LedgerUnavailable or CommitUnknown.
   * Default: TOLLGATE_RETRY_FOR (a duration such as `30s`), else 30 s.
   */
  retryForMs?: number;
  /** How long one try may wait for its answer, in milliseconds. Default 30 s. */
  attemptTimeoutMs?: number;
}

/** A class of error, for `failureTypes`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ErrorClass = abstract new (...args: any[]) => unknown;

/** withPermit's options. */
export interface WithPermitOptions<T> {
  /** Errors of these classes mean the action did not happen: reported `failed`. Any other is reported `unknown`. */
  failureTypes?: readonly ErrorClass[];
  /** What to store as the action's result on the `succeeded` report (at most 64 KiB of text). */
  result?: (value: T) => string | undefined;
  /** A safe reference to the external effect, from the action's value. */
  ref?: (value: T) => string | undefined;
  /** Context, lease, redaction, agent and attempt id, as for guard. */
  context?: GuardContext;
  leaseSeconds?: number;
  redact?: boolean;
  agent?: string;
  attemptId?: string;
  /** Wait this long for an operator's decision before throwing ApprovalPending (see GuardOptions.waitMs). */
  waitMs?: number;
}

const OUTCOMES: readonly Outcome[] = ["succeeded", "failed", "unknown"];
const MAX_FIELD = 4000;
const ATTEMPT = /^[A-Za-z0-9._-]{1,128}$/;

/** A tollgate client over HTTP. */
export class Client {
  /** Where the service is, as given. */
  readonly url: string;
  readonly #endpoint: Endpoint;
  readonly #token: string | undefined;
  readonly #agent: string | undefined;
  readonly #retryForMs: number;
  readonly #attemptTimeoutMs: number;

  constructor(options: ClientOptions = {}) {
    const url = options.url ?? process.env.TOLLGATE_URL ?? "";
    this.#endpoint = parseEndpoint(url);
    this.url = this.#endpoint.display;
    const token = options.token ?? process.env.TOLLGATE_TOKEN;
    if (token !== undefined && token !== "" && !/^[\x21-\x7e]+$/.test(token)) {
      throw new InvalidInput("the token is printable ASCII without spaces (as `tollgate agents token create` prints it)", {}, 2);
    }
    this.#token = token || undefined;
    this.#agent = options.agent;
    this.#retryForMs = options.retryForMs ?? envDuration("TOLLGATE_RETRY_FOR") ?? 30_000;
    this.#attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
    if (!(this.#retryForMs >= 0) || !(this.#attemptTimeoutMs > 0)) throw new InvalidInput("retryForMs is 0 or more and attemptTimeoutMs more than 0", {}, 2);
  }

  /**
   * Guards an action: records its intent under key if new, lets policy (and
   * an operator, where policy asks one) decide, and returns the answer that
   * carries a permit to act now. Every other answer is thrown: ApprovalPending
   * (come back later, same key and payload), ActionDenied, OutcomeUncertain,
   * AlreadySettled, KeyConflict, and the errors of any call.
   */
  async guard(key: string, options: GuardOptions): Promise<GuardAnswer> {
    checkKey(key);
    const payload = checkPayload(options);
    const req: Record<string, unknown> = { payload };
    if (options.context !== undefined) req.context = options.context;
    if (options.leaseSeconds !== undefined) {
      if (!(typeof options.leaseSeconds === "number" && options.leaseSeconds > 0 && Number.isFinite(options.leaseSeconds))) {
        throw new InvalidInput(`tollgate guard ${key}: leaseSeconds is a number of seconds above 0`, { key }, 3);
      }
      req.lease = `${Math.round(options.leaseSeconds * 1000)}ms`;
    }
    if (options.redact) req.redact = true;
    const agent = options.agent ?? this.#agent;
    if (agent) req.agent = agent;
    const attempt = options.attemptId ?? newAttemptId();
    if (!ATTEMPT.test(attempt)) throw new InvalidInput("attemptId is 1 to 128 of letters, digits, '.', '_' and '-'", { key }, 3);
    const waitUntil = Date.now() + Math.max(0, options.waitMs ?? 0);
    for (;;) {
      try {
        const answer = await this.#call("guard", "POST", "/v1/guard", { "Idempotency-Key": key, "Tollgate-Attempt": attempt }, req, true);
        return answer as unknown as GuardAnswer;
      } catch (err) {
        const left = waitUntil - Date.now();
        if (!(err instanceof ApprovalPending) || left <= 0) throw err;
        await sleep(Math.min(left, Math.max(100, Math.min((err.retryAfter ?? 1) * 1000, 1000))));
      }
    }
  }

  /** Guards an action and returns its permit (see guard). Prefer withPermit, which also reports. */
  async requestPermit(key: string, options: GuardOptions): Promise<Permit> {
    return new Permit(this, await this.guard(key, options));
  }

  /**
   * Runs fn only with a permit for key and reports its outcome: `succeeded`
   * when it returns, `failed` when it throws one of failureTypes, `unknown`
   * for anything else (the key becomes uncertain, for an operator, and is
   * never run again). The error is re-thrown. The lease is checked before fn
   * is called (LeaseLapsed: fn is not called, nothing is reported). When fn
   * reports by hand (permit.report), nothing more is reported.
   */
  async withPermit<T>(key: string, payload: Payload, fn: (permit: Permit) => T | Promise<T>, options: WithPermitOptions<T> = {}): Promise<T> {
    const permit = await this.requestPermit(key, {
      ...payload,
      context: options.context,
      leaseSeconds: options.leaseSeconds,
      redact: options.redact,
      agent: options.agent,
      attemptId: options.attemptId,
      waitMs: options.waitMs,
    });
    permit.validateForExecution();
    const started = performance.now();
    let value: T;
    try {
      value = await fn(permit);
    } catch (err) {
      if (permit.reported !== undefined || err instanceof LeaseLapsed) throw err;
      const failed = (options.failureTypes ?? []).some((t) => err instanceof t);
      const outcome: Outcome = failed ? "failed" : "unknown";
      try {
        await permit.report(outcome, { latencyMs: performance.now() - started });
      } catch (reportErr) {
        // The action's own error is the one the caller must see.
        process.emitWarning(`tollgate: reporting ${outcome} for ${permit.key} failed: ${(reportErr as Error).message}`, "TollgateWarning");
      }
      throw err;
    }
    if (permit.reported === undefined) {
      await permit.report("succeeded", { latencyMs: performance.now() - started, ref: options.ref?.(value), result: options.result?.(value) });
    }
    return value;
  }

  /** Reports a permitted action's outcome: succeeded, failed or unknown. */
  async report(key: string, permitId: string, outcome: Outcome, options: ReportOptions = {}): Promise<ReportAnswer> {
    checkKey(key);
    if (!OUTCOMES.includes(outcome)) throw new InvalidInput(`tollgate report ${key}: outcome must be one of ${OUTCOMES.join(", ")}`, { key }, 3);
    if (typeof permitId !== "string" || permitId === "") throw new InvalidInput(`tollgate report ${key}: a permit id is required`, { key }, 3);
    const req: Record<string, unknown> = { key, permit: permitId, outcome };
    if (options.ref) req.ref = options.ref;
    if (options.latencyMs !== undefined) req.latency = `${Math.max(0, Math.round(options.latencyMs))}ms`;
    if (options.result !== undefined) req.result = options.result;
    const answer = await this.#call("report", "POST", "/v1/report", {}, req, true);
    return answer as unknown as ReportAnswer;
  }

  /** Everything the ledger knows about a key that is this caller's (`tollgate status`). */
  async status(key: string): Promise<StatusAnswer> {
    checkKey(key);
    return (await this.#call("status", "GET", "/v1/actions/" + encodeURIComponent(key), {}, undefined, false)) as unknown as StatusAnswer;
  }

  /** The active operator epoch, or null when none was activated. */
  async epoch(): Promise<string | null> {
    const e = await this.epochInfo();
    return e.active && e.epoch ? e.epoch : null;
  }

  /** Who the service takes this caller for: the name calls act under by default, and the token's scope. */
  async whoami(): Promise<WhoamiAnswer> {
    return (await this.#call("whoami", "GET", "/v1/whoami", {}, undefined, false)) as unknown as WhoamiAnswer;
  }

  /** The active operator epoch's record (`tollgate epoch show`). */
  async epochInfo(): Promise<EpochAnswer> {
    return (await this.#call("epoch", "GET", "/v1/epoch", {}, undefined, false)) as unknown as EpochAnswer;
  }

  /**
   * Makes one call, retrying connection failures, 503 and 429 with backoff
   * (Retry-After honoured) within retryForMs, and returns its 2xx body with
   * exit code 0 or throws what the answer says. write says whether a lost
   * answer can hide a commit.
   */
  async #call(what: string, method: string, path: string, extra: Record<string, string>, body: unknown, write: boolean): Promise<AnswerObject> {
    const headers: Record<string, string> = { Accept: "application/json, application/problem+json", ...extra };
    if (this.#token) headers.Authorization = `Bearer ${this.#token}`;
    let text: string | undefined;
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      text = JSON.stringify(body);
    }
    const deadline = Date.now() + this.#retryForMs;
    // Whether an earlier try of this write may have reached the server and
    // committed: then running out of retries is CommitUnknown, never
    // "nothing was recorded", whatever the last try met.
    let maybeCommitted = false;
    for (let attempt = 0; ; attempt++) {
      let res: RawResponse | undefined;
      let failure: TollgateError | undefined;
      let wait = backoff(attempt);
      let serverWait = false;
      try {
        res = await send(this.#endpoint, method, path, headers, text, this.#attemptTimeoutMs);
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        const where = `${this.url}${extra["Idempotency-Key"] ? " for " + extra["Idempotency-Key"] : ""}`;
        if (!err.retryable) {
          throw new TollgateError(`tollgate ${what}: cannot reach the service at ${where}: ${err.message} (${err.code ?? "no code"}); a retry will not help`);
        }
        maybeCommitted ||= err.sent && write;
        failure =
          err.sent && write
            ? new CommitUnknown(`tollgate ${what}: the answer from ${where} was lost (${err.message}); ask status before acting, or repeat the same call (it is idempotent)`, {}, 74)
            : new LedgerUnavailable(`tollgate ${what}: the service at ${where} is unreachable (${err.message}); nothing was recorded, repeat the same call later`, { safe_to_repeat: true }, 75);
      }
      if (res !== undefined) {
        const parsed = parseBody(res);
        const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
        if (res.status === 503 || res.status === 429 || ((res.status === 502 || res.status === 504) && parsed === undefined)) {
          const obj = parsed ?? { error: `the service answered ${res.status}`, safe_to_repeat: true };
          const code = typeof obj.exit_code === "number" ? obj.exit_code : 75;
          failure = errorFor(what, code, stripProblem(obj), res.status, str(obj.type), retryAfter);
          if (retryAfter !== undefined) {
            wait = retryAfter * 1000;
            serverWait = true;
          }
        } else {
          if (parsed === undefined) {
            throw new TollgateError(`tollgate ${what}: the service at ${this.url} answered ${res.status} without a JSON object (is it tollgate serve?)`, {}, undefined, res.status);
          }
          const code = typeof parsed.exit_code === "number" ? parsed.exit_code : undefined;
          if (res.status >= 200 && res.status < 300 && (code === undefined || code === 0)) return parsed;
          throw errorFor(what, code, stripProblem(parsed), res.status, str(parsed.type), retryAfter);
        }
      }
      // The last try is made at the deadline, unless the server asked
      // for a wait (Retry-After) longer than the budget has left.
      const left = deadline - Date.now();
      if (left <= 0 || (serverWait && wait > left)) {
        if (maybeCommitted && failure instanceof LedgerUnavailable) {
          throw new CommitUnknown(`tollgate ${what}: an earlier try's answer was lost and the service then stayed unavailable (${failure.message}); ask status before acting, or repeat the same call (it is idempotent)`, failure.answer, 74, failure.status);
        }
        throw failure!;
      }
      await sleep(Math.min(wait, left));
    }
  }
}

/** A permit to execute one action once, before its lease runs out. */
export class Permit {
  /** The guard's answer that issued the permit. */
  readonly answer: GuardAnswer;
  /** The key guarded (logical, or hsr1:<epoch>:<logical>). */
  readonly key: string;
  /** The destination's key: hand it to the provider as its own idempotency key. */
  readonly destinationKey: string;
  /** The permit id to report with. */
  readonly permitId: string;
  /** Hex SHA-256 of the canonical payload. */
  readonly payloadSha256: string;
  /** When the lease ends: report before then. */
  readonly leaseUntil: Date | null;
  /** The outcome reported through this permit, once one was. */
  reported: Outcome | undefined;
  readonly #client: Client;

  constructor(client: Client, answer: GuardAnswer) {
    if (!answer.permit_id) throw new TollgateError(`tollgate guard ${answer.key}: the answer carries no permit; do not execute`, answer as unknown as AnswerObject);
    this.#client = client;
    this.answer = answer;
    this.key = answer.key;
    this.destinationKey = answer.logical_key || answer.key;
    this.permitId = answer.permit_id;
    this.payloadSha256 = answer.payload_sha256;
    this.leaseUntil = parseTime(answer.lease_until);
  }

  /** Throws LeaseLapsed when the lease has run out: do not execute. Call it as the last step before the side effect. */
  validateForExecution(now: Date = new Date()): void {
    if (this.leaseUntil === null || now.getTime() >= this.leaseUntil.getTime()) {
      throw new LeaseLapsed(
        `tollgate permit for ${this.key}: the lease ran out at ${this.leaseUntil?.toISOString() ?? "?"}; do not execute (an operator reconciles the key)`,
        this.answer as unknown as AnswerObject,
      );
    }
  }

  /** Reports the outcome by hand; withPermit then reports nothing more. */
  async report(outcome: Outcome, options: ReportOptions = {}): Promise<ReportAnswer> {
    const answer = await this.#client.report(this.key, this.permitId, outcome, options);
    this.reported = outcome;
    return answer;
  }
}

/** A fresh attempt id: 128 random bits, URL-safe base64. */
export function newAttemptId(): string {
  return randomBytes(16).toString("base64url");
}

/** Checks a payload as SPEC 2 says and returns it as sent. */
function checkPayload(p: Payload): { kind: string; target: string; body: string } {
  const body = typeof p.body === "string" ? p.body : canonicalJSON(p.body);
  const out = { kind: p.kind, target: p.target, body };
  for (const [name, v] of Object.entries(out)) {
    if (typeof v !== "string") throw new InvalidInput(`invalid payload: ${name} is a string`, {}, 3);
    if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(v)) {
      throw new InvalidInput(`invalid payload: ${name} holds a lone surrogate (not valid UTF-8)`, {}, 3);
    }
    let n = 0;
    for (const _ of v) n++;
    if (n > MAX_FIELD) throw new InvalidInput(`invalid payload: ${name} is at most ${MAX_FIELD} characters (got ${n})`, {}, 3);
  }
  return out;
}

/** JSON with object keys sorted and no spaces, so the same arguments always give the same body. */
export function canonicalJSON(v: unknown): string {
  if (v === undefined) throw new InvalidInput("invalid payload: body is text or JSON data", {}, 3);
  return JSON.stringify(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === "object" && !(v instanceof Date)) {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort(byCodePoint)) o[k] = sortKeys((v as Record<string, unknown>)[k]);
    return o;
  }
  return v;
}

/** Orders strings by Unicode code point, as Python's sort_keys does (JavaScript's sort compares UTF-16 units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < x.length && i < y.length; i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function parseBody(res: RawResponse): AnswerObject | undefined {
  try {
    const v: unknown = JSON.parse(res.body);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as AnswerObject) : undefined;
  } catch {
    return undefined;
  }
}

/** A problem document's members, the CLI's object, without RFC 9457's own. */
function stripProblem(obj: AnswerObject): AnswerObject {
  if (typeof obj.type !== "string" || typeof obj.status !== "number") return obj;
  const { type: _t, title: _ti, status: _s, detail, ...rest } = obj;
  if (rest.error === undefined && typeof detail === "string") rest.error = detail;
  return rest;
}

function parseRetryAfter(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (/^\d+$/.test(v.trim())) return Math.min(Number(v.trim()), 3600);
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, Math.min((t - Date.now()) / 1000, 3600));
}

/** Exponential backoff from 100 ms to 2 s with jitter. */
function backoff(attempt: number): number {
  const base = Math.min(2000, 100 * 2 ** Math.min(attempt, 5));
  return base / 2 + Math.random() * (base / 2);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A Go-style duration from the environment (`30s`, `500ms`, `2m`), in milliseconds. */
function envDuration(name: string): number | undefined {
  const v = process.env[name];
  if (!v) return undefined;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(v); m; m = re.exec(v)) {
    total += Number(m[1]) * units[m[2]!]!;
    end = re.lastIndex;
  }
  if (end !== v.length || end === 0) throw new InvalidInput(`${name}=${JSON.stringify(v)}: a duration such as 30s or 500ms`, {}, 2);
  return total;
}
