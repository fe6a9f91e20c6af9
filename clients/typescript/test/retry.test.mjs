// Retries: connection refused and reset, 503 and 429 are retried with backoff
// within the budget, Retry-After honoured, every try of one call carrying the
// same attempt id; what is thrown when the budget runs out says whether
// anything can have been recorded.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import * as http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, CommitUnknown, LedgerUnavailable, TollgateError } from "../dist/index.js";
import { backends, startServe, uniq } from "./helpers.mjs";

const PERMIT = {
  key: "k:1", logical_key: "k:1", epoch: "", payload_sha256: "ab", state: "executing", verdict: "permitted", replayed: false,
  safe_new_key: false, permit_id: "p-1", lease_until: new Date(Date.now() + 600_000).toISOString(), authority: "x", exit_code: 0,
};

/** A scripted HTTP server on a Unix socket: answers[i] answers the i-th request ("reset" drops the connection). */
async function scripted(answers) {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-ts-retry-"));
  const sock = join(dir, "s.sock");
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ at: Date.now(), headers: req.headers, body });
      const a = answers[Math.min(seen.length - 1, answers.length - 1)];
      if (a === "reset") {
        req.socket.destroy();
        return;
      }
      res.writeHead(a.status, { "Content-Type": a.type ?? "application/json", ...(a.headers ?? {}) });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise((r) => server.listen(sock, r));
  return {
    url: "unix://" + sock,
    seen,
    close: () => new Promise((r) => {
      server.close(() => {
        rmSync(dir, { recursive: true, force: true });
        r();
      });
      server.closeAllConnections();
    }),
  };
}

const unavailable = { status: 503, type: "application/problem+json", headers: { "Retry-After": "1" },
  body: { type: "urn:tollgate:problem:unavailable", title: "Ledger unavailable", status: 503, error: "the ledger is busy", exit_code: 75, safe_to_repeat: true } };
const commitUnknown = { status: 503, type: "application/problem+json", headers: { "Retry-After": "0" },
  body: { type: "urn:tollgate:problem:commit-unknown", title: "Commit unknown", status: 503, error: "commit unknown", exit_code: 74, committed: "unknown" } };
const payload = { kind: "email.send", target: "t", body: "b" };

describe("retries against a scripted server", () => {
  it("retries 503 after Retry-After, with the same attempt id and key on every try, then returns the permit", async (t) => {
    const s = await scripted([unavailable, unavailable, { status: 200, body: PERMIT }]);
    t.after(s.close);
    const c = new Client({ url: s.url, retryForMs: 10_000 });
    const a = await c.guard("k:1", payload);
    assert.equal(a.permit_id, "p-1");
    assert.equal(s.seen.length, 3);
    const attempts = new Set(s.seen.map((r) => r.headers["tollgate-attempt"]));
    assert.equal(attempts.size, 1, "one attempt id for every try of one call");
    assert.match([...attempts][0], /^[A-Za-z0-9_-]{16,128}$/);
    assert.ok(s.seen.every((r) => r.headers["idempotency-key"] === "k:1"));
    assert.ok(s.seen[1].at - s.seen[0].at >= 950, `Retry-After: 1 honoured (waited ${s.seen[1].at - s.seen[0].at} ms)`);
    // The next call is another attempt.
    await c.guard("k:1", payload).catch(() => {});
    assert.notEqual(s.seen[3].headers["tollgate-attempt"], s.seen[0].headers["tollgate-attempt"]);
  });

  it("throws LedgerUnavailable (safe to repeat) when 503 lasts past the budget", async (t) => {
    const s = await scripted([unavailable]);
    t.after(s.close);
    const c = new Client({ url: s.url, retryForMs: 1500 });
    const e = await c.guard("k:1", payload).then(() => assert.fail("no error"), (e) => e);
    assert.ok(e instanceof LedgerUnavailable, e.message);
    assert.equal(e.answer.safe_to_repeat, true);
    assert.equal(e.status, 503);
    assert.ok(s.seen.length >= 2 && s.seen.length <= 3, `retried within 1.5 s at 1 s intervals (${s.seen.length} tries)`);
  });

  it("throws CommitUnknown for the commit-unknown answer that lasts past the budget", async (t) => {
    const s = await scripted([commitUnknown]);
    t.after(s.close);
    const c = new Client({ url: s.url, retryForMs: 300 });
    const e = await c.report("k:1", "p-1", "succeeded").then(() => assert.fail("no error"), (e) => e);
    assert.ok(e instanceof CommitUnknown, e.message);
    assert.equal(e.exitCode, 74);
    assert.ok(s.seen.length >= 2, "retried");
  });

  it("retries a connection reset, and throws CommitUnknown for a write whose answers stay lost", async (t) => {
    const s = await scripted(["reset", { status: 200, body: PERMIT }]);
    t.after(s.close);
    const c = new Client({ url: s.url, retryForMs: 5000 });
    assert.equal((await c.guard("k:1", payload)).permit_id, "p-1");
    assert.equal(s.seen[0].headers["tollgate-attempt"], s.seen[1].headers["tollgate-attempt"]);

    const lost = await scripted(["reset"]);
    t.after(lost.close);
    const c2 = new Client({ url: lost.url, retryForMs: 400 });
    const e = await c2.guard("k:1", payload).then(() => assert.fail("no error"), (e) => e);
    assert.ok(e instanceof CommitUnknown, `${e.name}: ${e.message}`);
    assert.ok(lost.seen.length >= 2);
  });

  it("throws CommitUnknown, not LedgerUnavailable, when a write's answer was lost and the service then stayed unavailable", async (t) => {
    const s = await scripted(["reset", { ...unavailable, headers: { "Retry-After": "0" } }]);
    t.after(s.close);
    const c = new Client({ url: s.url, retryForMs: 500 });
    const e = await c.guard("k:1", payload).then(() => assert.fail("no error"), (e) => e);
    assert.ok(e instanceof CommitUnknown, `${e.name}: ${e.message}`);
    // A read has nothing to commit: the same faults are LedgerUnavailable.
    const r = await c.epochInfo().then(() => assert.fail("no error"), (e) => e);
    assert.ok(r instanceof LedgerUnavailable, `${r.name}: ${r.message}`);
  });

  it("throws LedgerUnavailable after retrying a refused connection for the budget, nothing sent", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tollgate-ts-none-"));
    try {
      const c = new Client({ url: "unix://" + join(dir, "absent.sock"), retryForMs: 600 });
      const t0 = Date.now();
      const e = await c.guard("k:1", payload).then(() => assert.fail("no error"), (e) => e);
      assert.ok(e instanceof LedgerUnavailable, `${e.name}: ${e.message}`);
      assert.ok(Date.now() - t0 >= 590, `it retried for its whole budget (gave up after ${Date.now() - t0} ms)`);
      assert.ok(Date.now() - t0 < 3000, "within its budget");
      const tcp = new Client({ url: "http://127.0.0.1:1", retryForMs: 0 });
      assert.ok((await tcp.epochInfo().catch((e) => e)) instanceof LedgerUnavailable);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses plain http off loopback and bad URLs before any request", () => {
    for (const url of ["http://example.com:8080", "http://10.0.0.1:80", "ftp://127.0.0.1", "unix:relative.sock", "https://u:p@h:1", ""]) {
      assert.throws(() => new Client({ url }), TollgateError, url);
    }
    for (const url of ["http://127.0.0.1:9", "http://[::1]:9", "http://localhost:9", "https://tollgate.example:8443", "unix:///run/t.sock", "unix:/run/t.sock"]) {
      new Client({ url });
    }
  });

  it("reads TOLLGATE_URL and TOLLGATE_TOKEN when no options are given", async (t) => {
    const s = await scripted([{ status: 200, body: { name: "a", scope: "agent" } }]);
    t.after(s.close);
    const saved = { u: process.env.TOLLGATE_URL, k: process.env.TOLLGATE_TOKEN };
    process.env.TOLLGATE_URL = s.url;
    process.env.TOLLGATE_TOKEN = "tg_secret-1";
    try {
      await new Client().whoami();
      assert.equal(s.seen[0].headers.authorization, "Bearer tg_secret-1");
    } finally {
      for (const [k, v] of [["TOLLGATE_URL", saved.u], ["TOLLGATE_TOKEN", saved.k]]) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

for (const backend of backends()) {
  describe(`rate limits on ${backend}`, () => {
    let srv;
    before(async () => {
      srv = await startServe(backend, { extra: ["--rate", "1", "--burst", "1"], policies: [["email.*", "auto"]] });
    });
    after(async () => {
      await srv?.stop();
    });

    it("waits out a real 429 (Retry-After) within the budget, and throws LedgerUnavailable without one", async () => {
      const c = new Client({ url: srv.unixUrl, retryForMs: 5000 });
      await c.guard(uniq("email"), payload);
      const t0 = Date.now();
      const a = await c.guard(uniq("email"), payload);
      assert.equal(a.verdict, "permitted");
      assert.ok(Date.now() - t0 >= 500, `the second call waited for the rate (${Date.now() - t0} ms)`);
      const impatient = new Client({ url: srv.unixUrl, retryForMs: 0 });
      const e = await impatient.guard(uniq("email"), payload).then(() => assert.fail("no error"), (e) => e);
      assert.ok(e instanceof LedgerUnavailable, `${e.name}: ${e.message}`);
      assert.equal(e.status, 429);
    });
  });
}
