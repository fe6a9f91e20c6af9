/**
 * One HTTP exchange with the service: `fetch` for https:// and loopback
 * http:// URLs, node:http over the socket for unix:// URLs. Failures are
 * classified by whether the request can have reached the server, which
 * decides what the client says when its retries run out.
 */
import * as http from "node:http";
import { InvalidInput } from "./errors.js";

/** Where the service is. */
export type Endpoint =
  | { kind: "unix"; socketPath: string; display: string }
  | { kind: "http"; base: string; display: string };

/** An answer as received. */
export interface RawResponse {
  status: number;
  /** Header values by lower-case name. */
  headers: Map<string, string>;
  body: string;
}

/**
 * A transport failure. `sent` is false when the request cannot have reached
 * the server (connection refused, no socket): nothing was recorded. `sent` is
 * true when it may have (a reset, a timeout): the server may have committed.
 * `retryable` is false for failures a retry will not cure (permission denied).
 */
export class TransportError extends Error {
  constructor(message: string, readonly sent: boolean, readonly retryable: boolean, readonly code?: string) {
    super(message);
    this.name = "TransportError";
  }
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Parses a service URL: unix:///path/to.sock, https://host:port, or http:// on a loopback address. */
export function parseEndpoint(url: string): Endpoint {
  if (typeof url !== "string" || url === "") {
    throw new InvalidInput("no service URL: pass {url} or set TOLLGATE_URL (unix:///path/to.sock, https://host:port)", {}, 2);
  }
  if (url.startsWith("unix:")) {
    let path = url.slice("unix:".length);
    if (path.startsWith("//")) path = path.slice(2);
    if (!path.startsWith("/")) throw new InvalidInput(`service URL ${JSON.stringify(url)}: a unix URL names an absolute socket path (unix:///path/to.sock)`, {}, 2);
    return { kind: "unix", socketPath: decodeURIComponent(path), display: url };
  }
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InvalidInput(`service URL ${JSON.stringify(url)}: not a URL (unix:///path/to.sock, https://host:port)`, {}, 2);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") {
    throw new InvalidInput(`service URL ${JSON.stringify(url)}: the scheme is unix, https, or http on a loopback address`, {}, 2);
  }
  if (u.username || u.password || u.search || u.hash) {
    throw new InvalidInput(`service URL ${JSON.stringify(url)}: no credentials, query or fragment in the URL (the token goes in {token} or TOLLGATE_TOKEN)`, {}, 2);
  }
  if (u.protocol === "http:" && !isLoopback(u.hostname)) {
    throw new InvalidInput(`service URL ${JSON.stringify(url)}: plain http only to a loopback address (127.0.0.1, ::1, localhost); use https elsewhere, so the token never crosses a network in clear`, {}, 2);
  }
  const base = u.origin + u.pathname.replace(/\/+$/, "");
  return { kind: "http", base, display: base };
}

function isLoopback(host: string): boolean {
  if (LOOPBACK_NAMES.has(host)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Error codes that mean the request never reached a server. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOENT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);
/** Error codes a retry will not cure: permissions, and a certificate the client does not trust. */
const FATAL = new Set(["EACCES", "EPERM", "ENOTSOCK", "EPROTO"]);
const FATAL_TLS = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|^ERR_TLS_|^ERR_SSL_/;

function classify(err: unknown, timedOut: boolean): TransportError {
  if (timedOut) return new TransportError("no answer within the attempt timeout", true, true, "ETIMEDOUT");
  let e: unknown = err;
  // fetch wraps the socket's error as its cause, sometimes twice.
  for (let i = 0; i < 3 && e && typeof e === "object" && !("code" in e) && "cause" in e; i++) e = (e as { cause: unknown }).cause;
  const code = e && typeof e === "object" && "code" in e ? String((e as { code: unknown }).code) : undefined;
  const msg = e instanceof Error ? e.message : String(e);
  if (code && (FATAL.has(code) || FATAL_TLS.test(code))) return new TransportError(msg, false, false, code);
  if (code && NOT_SENT.has(code)) return new TransportError(msg, false, true, code);
  return new TransportError(msg, true, true, code);
}

const unixAgent = new http.Agent({ keepAlive: true });

/** Sends one request and reads its whole answer. */
export async function send(ep: Endpoint, method: string, path: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<RawResponse> {
  if (ep.kind === "unix") return sendUnix(ep.socketPath, method, path, headers, body, timeoutMs);
  const ctl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort();
  }, timeoutMs);
  try {
    const res = await fetch(ep.base + path, { method, headers, body, signal: ctl.signal, redirect: "error" });
    const text = await res.text();
    const h = new Map<string, string>();
    res.headers.forEach((v, k) => h.set(k.toLowerCase(), v));
    return { status: res.status, headers: h, body: text };
  } catch (err) {
    throw classify(err, timedOut);
  } finally {
    clearTimeout(timer);
  }
}

function sendUnix(socketPath: string, method: string, path: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const h: Record<string, string | number> = { ...headers, Host: "tollgate" };
    if (body !== undefined) h["Content-Length"] = Buffer.byteLength(body);
    const req = http.request({ socketPath, method, path, headers: h, agent: unixAgent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", (err) => reject(classify(err, timedOut)));
      res.on("end", () => {
        clearTimeout(timer);
        const hs = new Map<string, string>();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) hs.set(k.toLowerCase(), Array.isArray(v) ? v.join(", ") : v);
        resolve({ status: res.statusCode ?? 0, headers: hs, body: Buffer.concat(chunks).toString("utf8") });
      });
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error("timeout"));
    }, timeoutMs);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(classify(err, timedOut));
    });
    req.end(body);
  });
}
