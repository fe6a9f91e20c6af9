// The client against a real `tollgate serve`, on each backend: every error
// class from a real answer, the seed's exit-and-retry flow with an operator's
// approval made by the CLI, withPermit's reports, and the answers' fields.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ANSWER_FIELDS,
  ActionDenied,
  AlreadySettled,
  ApprovalPending,
  Client,
  InvalidInput,
  KeyConflict,
  LeaseLapsed,
  LedgerUnavailable,
  NotFound,
  NotPermitted,
  OutcomeUncertain,
  TollgateError,
  Unauthenticated,
  authorityKey,
} from "../dist/index.js";
import { backends, lossyRelay, startServe, uniq } from "./helpers.mjs";

/** Fails unless every field of obj is one the client declares for its kind of answer. */
function onlyDeclared(obj, kind) {
  const extra = Object.keys(obj).filter((k) => !ANSWER_FIELDS[kind].includes(k));
  assert.deepEqual(extra, [], `the server sent ${kind} fields the client does not declare`);
}

/** Asserts that fn throws an error of cls (and of the base class), and returns it. */
async function throws(fn, cls) {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof cls, `expected ${cls.name}, got ${err?.constructor?.name}: ${err?.message}`);
    assert.ok(err instanceof TollgateError, "every error is a TollgateError");
    assert.equal(err.name, cls.name);
    return err;
  }
  assert.fail(`expected ${cls.name}, nothing was thrown`);
}

class PaymentDeclined extends Error {}

for (const backend of backends()) {
  describe(`client on ${backend}`, () => {
    let srv;
    let client;
    before(async () => {
      srv = await startServe(backend, {
        policies: [
          ["refund.*", "approval"],
          ["export.*", "deny"],
          ["email.*", "auto"],
        ],
      });
      client = new Client({ url: srv.unixUrl, retryForMs: 2000 });
    });
    after(async () => {
      await srv?.stop();
    });

    it("runs the seed's exit-and-retry flow: pending, approved by an operator, the permit, the report, then settled", async () => {
      const key = uniq("refund");
      const payload = { kind: "refund.create", target: "customer:c-1", body: { amount: 40, currency: "EUR" } };
      let runs = 0;
      const act = () => client.withPermit(key, payload, (permit) => {
        runs++;
        assert.equal(permit.destinationKey, key);
        return { refund: "re_1" };
      });

      const pending = await throws(act, ApprovalPending);
      assert.equal(pending.key, key);
      assert.equal(pending.exitCode, 75);
      assert.equal(pending.status, 202);
      assert.equal(pending.state, "pending");
      assert.ok(pending.expiresAt instanceof Date && pending.expiresAt.getTime() > Date.now(), "expiresAt is the approval deadline");
      assert.equal(pending.approvers, 1);
      onlyDeclared(pending.answer, "guard");
      // The agent exits and comes back: still pending, nothing run.
      const again = await throws(act, ApprovalPending);
      assert.equal(again.answer.replayed, true);
      assert.equal(runs, 0);

      const approved = await srv.cli(["approve", key, "--operator", "alice"]);
      assert.equal(approved.code, 0, approved.stderr);

      const value = await act();
      assert.deepEqual(value, { refund: "re_1" });
      assert.equal(runs, 1);
      const st = await client.status(key);
      onlyDeclared(st, "status");
      assert.equal(st.state, "succeeded");
      assert.equal(st.reports.length, 1);
      assert.equal(st.reports[0].outcome, "succeeded");

      const settled = await throws(act, AlreadySettled);
      assert.equal(settled.exitCode, 10);
      assert.equal(runs, 1, "a settled action never runs again");
    });

    it("waits for an operator's decision with waitMs, as guard --wait does, and gives up with ApprovalPending", async () => {
      const key = uniq("refund");
      const p = { kind: "refund.create", target: "customer:c-9", body: "{}" };
      const t0 = Date.now();
      await throws(() => client.guard(key, { ...p, waitMs: 600 }), ApprovalPending);
      assert.ok(Date.now() - t0 >= 550, "it asked again until waitMs passed");
      const approving = new Promise((r) => setTimeout(r, 300)).then(() => srv.cli(["approve", key, "--operator", "alice"]));
      const a = await client.guard(key, { ...p, waitMs: 15_000 });
      assert.equal(a.verdict, "permitted");
      assert.equal((await approving).code, 0);
    });

    it("returns a permit's answer from guard with the --json fields, and report answers and replays", async () => {
      const key = uniq("email");
      const a = await client.guard(key, { kind: "email.send", target: "user:u-1", body: "hello", leaseSeconds: 60 });
      onlyDeclared(a, "guard");
      assert.equal(a.verdict, "permitted");
      assert.equal(a.exit_code, 0);
      assert.ok(a.permit_id);
      const lease = new Date(a.lease_until).getTime() - Date.now();
      assert.ok(lease > 30_000 && lease <= 61_000, `lease of 60 s sent as such (got ${lease} ms)`);
      const r = await client.report(key, a.permit_id, "succeeded", { ref: "msg-1", latencyMs: 12.4 });
      onlyDeclared(r, "report");
      assert.equal(r.outcome, "succeeded");
      assert.equal(r.replayed, false);
      const r2 = await client.report(key, a.permit_id, "succeeded", { ref: "msg-1", latencyMs: 12.4 });
      assert.equal(r2.replayed, true);
      // A different final report is refused, never an overwrite.
      const differs = await throws(() => client.report(key, a.permit_id, "failed"), KeyConflict);
      assert.equal(differs.exitCode, 4);
      assert.equal((await client.status(key)).state, "succeeded");
    });

    it("throws ActionDenied for a policy deny and for an operator's rejection, with the reason", async () => {
      const denied = await throws(() => client.guard(uniq("export"), { kind: "export.all", target: "db:main", body: "{}" }), ActionDenied);
      assert.equal(denied.exitCode, 5);
      assert.equal(denied.status, 403);
      assert.equal(denied.problemType, "urn:tollgate:problem:denied");

      const key = uniq("refund");
      const p = { kind: "refund.create", target: "customer:c-2", body: "{}" };
      await throws(() => client.guard(key, p), ApprovalPending);
      const rej = await srv.cli(["reject", key, "--reason", "duplicate of an earlier refund", "--operator", "alice"]);
      assert.equal(rej.code, 0, rej.stderr);
      const rejected = await throws(() => client.guard(key, p), ActionDenied);
      assert.equal(rejected.state, "rejected");
      assert.equal(rejected.safeNewKey, true);
      assert.match(rejected.reason ?? JSON.stringify(rejected.answer), /duplicate of an earlier refund/);
    });

    it("throws KeyConflict naming the differing fields when a key is reused with another payload (422)", async () => {
      const key = uniq("email");
      const a = await client.guard(key, { kind: "email.send", target: "user:u-1", body: "first" });
      const c = await throws(() => client.guard(key, { kind: "email.send", target: "user:u-2", body: "second" }), KeyConflict);
      assert.equal(c.status, 422);
      assert.deepEqual([...c.differs].sort(), ["body", "target"]);
      assert.equal(c.storedSha256, a.payload_sha256);
      assert.ok(c.attemptedSha256 && c.attemptedSha256 !== a.payload_sha256);
      assert.ok(!c.message.includes("second"), "messages name keys, never bodies");
    });

    it("reports unknown for an unexpected throw inside withPermit, re-throws it, and never runs the action again", async () => {
      const key = uniq("email");
      const p = { kind: "email.send", target: "user:u-3", body: "x" };
      let runs = 0;
      const boom = new Error("socket closed mid-send");
      await assert.rejects(client.withPermit(key, p, () => { runs++; throw boom; }), (e) => e === boom);
      const st = await client.status(key);
      assert.equal(st.reports.at(-1).outcome, "unknown");
      assert.equal(st.state, "uncertain");
      const u = await throws(() => client.withPermit(key, p, () => { runs++; }), OutcomeUncertain);
      assert.equal(u.exitCode, 6);
      assert.equal(u.status, 409);
      assert.equal(runs, 1, "an uncertain action is never run again");
    });

    it("reports failed for the named failure types and the key ends with safe_new_key", async () => {
      const key = uniq("email");
      const p = { kind: "email.send", target: "user:u-4", body: "x" };
      let runs = 0;
      await assert.rejects(
        client.withPermit(key, p, () => { runs++; throw new PaymentDeclined("card declined"); }, { failureTypes: [PaymentDeclined] }),
        PaymentDeclined,
      );
      const st = await client.status(key);
      assert.equal(st.reports.at(-1).outcome, "failed");
      assert.equal(st.state, "failed");
      assert.equal(st.safe_new_key, true);
      await assert.rejects(client.withPermit(key, p, () => { runs++; }), TollgateError);
      assert.equal(runs, 1);
    });

    it("checks the lease: LeaseLapsed inside withPermit is re-thrown and nothing is reported", async () => {
      const key = uniq("email");
      const permit = await client.requestPermit(key, { kind: "email.send", target: "user:u-5", body: "x", leaseSeconds: 5 });
      assert.throws(() => permit.validateForExecution(new Date(permit.leaseUntil.getTime() + 1)), LeaseLapsed);
      permit.validateForExecution(); // in time: no throw

      const key2 = uniq("email");
      let sideEffects = 0;
      await assert.rejects(
        client.withPermit(key2, { kind: "email.send", target: "user:u-6", body: "x" }, (pm) => {
          pm.validateForExecution(new Date(Date.now() + 3_600_000)); // as if the action started an hour late
          sideEffects++;
        }),
        LeaseLapsed,
      );
      assert.equal(sideEffects, 0);
      const st = await client.status(key2);
      assert.equal(st.reports.length, 0, "a lapsed permit is left for an operator, not reported");
      assert.equal(st.state, "executing");
    });

    it("throws NotFound for a key the ledger does not hold and for a report without its permit", async () => {
      const nf = await throws(() => client.status(uniq("nothing")), NotFound);
      assert.equal(nf.status, 404);
      assert.equal(nf.exitCode, 7);
      await throws(() => client.report(uniq("nothing"), "00000000-0000-4000-8000-000000000000", "succeeded"), NotFound);
    });

    it("throws InvalidInput for a bad key before any request, and for input the server refuses", async () => {
      const dead = new Client({ url: "unix:///nonexistent/tollgate.sock", retryForMs: 0 });
      for (const bad of ["Refund:1", "refund::1", "a/b", "../x", "x".repeat(81), "hsr1:not-a-uuid:x", "refund:1 ", ""]) {
        // InvalidInput, not LedgerUnavailable: the key was refused before the client tried the (absent) server.
        const e = await throws(() => dead.guard(bad, { kind: "k", target: "t", body: "b" }), InvalidInput);
        assert.match(e.message, /key/);
      }
      await throws(() => dead.guard("ok:1", { kind: "k", target: "t", body: "x".repeat(4001) }), InvalidInput);
      await throws(() => dead.guard("ok:1", { kind: "k", target: "t", body: "\ud800" }), InvalidInput);
      assert.throws(() => authorityKey("ABC", "refund:1"), InvalidInput);
      assert.equal(authorityKey("544fb186-04c0-4dd5-b10b-7cfbb54b0b83", "refund:1"), "hsr1:544fb186-04c0-4dd5-b10b-7cfbb54b0b83:refund:1");
      // The server's own rule: a lease beyond its bound.
      const e = await throws(() => client.guard(uniq("email"), { kind: "email.send", target: "t", body: "b", leaseSeconds: 30 * 86400 }), InvalidInput);
      assert.equal(e.status, 400);
      assert.equal(e.exitCode, 3);
    });

    it("throws NotPermitted for another agent's name, and Unauthenticated over TCP without a valid token", async () => {
      const np = await throws(() => client.guard(uniq("email"), { kind: "email.send", target: "t", body: "b", agent: "someone-else" }), NotPermitted);
      assert.equal(np.status, 403);
      assert.equal(np.exitCode, 77);
      for (const token of [undefined, "not-a-token"]) {
        const tcp = new Client({ url: srv.tcpUrl, token, retryForMs: 0 });
        const un = await throws(() => tcp.guard(uniq("email"), { kind: "email.send", target: "t", body: "b" }), Unauthenticated);
        assert.ok(un instanceof NotPermitted);
        assert.equal(un.status, 401);
      }
    });

    it("guards over loopback TCP with a bearer token an operator made", async (t) => {
      const made = await srv.cli(["agents", "token", "create", "ts-agent", "--operator", "alice"]);
      if (made.code === 2 && /unknown command/.test(made.json?.error ?? "")) {
        // SPEC 12's token store is not in this build (docs/service.md, "What is not there yet").
        t.skip("this tollgate has no `agents token create` yet: TCP answers 401 to every call (tested above)");
        return;
      }
      assert.equal(made.code, 0, made.stderr);
      // `agents token create --json` prints {token: {id, name, scope, ...}, secret}: the secret is the bearer.
      const token = made.json?.secret;
      assert.equal(typeof token, "string", `agents token create --json prints the bearer as "secret": ${Object.keys(made.json ?? {})}`);
      const tcp = new Client({ url: srv.tcpUrl, token, retryForMs: 2000 });
      assert.equal((await tcp.whoami()).name, "ts-agent");
      const key = uniq("email");
      const a = await tcp.guard(key, { kind: "email.send", target: "user:u-8", body: "over tcp" });
      assert.equal(a.verdict, "permitted");
      assert.equal((await tcp.report(key, a.permit_id, "succeeded")).outcome, "succeeded");
      // The socket's agent (another name) may not read ts-agent's key.
      await throws(() => client.status(key), NotPermitted);
      // A revoked token is refused on its next call.
      const revoked = await srv.cli(["agents", "token", "revoke", made.json.token.id, "--operator", "alice"]);
      assert.equal(revoked.code, 0, revoked.stderr);
      await throws(() => tcp.whoami(), Unauthenticated);
    });

    it("reads who it is and the epoch, and guards under an authority key whose destination key the permit carries", async () => {
      const me = await client.whoami();
      onlyDeclared(me, "whoami");
      assert.equal(me.scope, "agent");
      const info = await client.epochInfo();
      onlyDeclared(info, "epoch");
      assert.equal(await client.epoch(), null);
    });

    it("replays a lost answer: the retry carries the same attempt id and gets the caller's own permit", async (t) => {
      const relay = await lossyRelay(srv.sock, srv.dir, 1);
      t.after(() => relay.close());
      const viaRelay = new Client({ url: relay.url, retryForMs: 5000 });
      const key = uniq("email");
      let result;
      let error;
      try {
        result = await viaRelay.guard(key, { kind: "email.send", target: "user:u-7", body: "x" });
      } catch (e) {
        error = e;
      }
      const guards = relay.requests.filter((r) => r.path === "/v1/guard");
      assert.equal(guards.length, 2, "the lost answer was retried once");
      assert.ok(guards[0].headers["tollgate-attempt"], "an attempt id is sent");
      assert.equal(guards[1].headers["tollgate-attempt"], guards[0].headers["tollgate-attempt"], "the retry carries the same attempt id");
      assert.equal(guards[1].headers["idempotency-key"], key);
      assert.equal(error, undefined, `the retry got its permit (got ${error?.name}: ${error?.message})`);
      assert.equal(result.verdict, "permitted");
      assert.ok(result.permit_id);
      // Nobody else gets it: a fresh call (another attempt id) is told the key is executing.
      const other = await throws(() => client.guard(key, { kind: "email.send", target: "user:u-7", body: "x" }), ApprovalPending);
      assert.equal(other.state, "executing");
    });
  });

  describe(`epochs and fencing on ${backend}`, () => {
    let srv;
    before(async () => {
      srv = await startServe(backend, { policies: [["email.*", "auto"]] });
    });
    after(async () => {
      await srv?.stop();
    });

    it("names the active epoch, fences bare keys with ActionDenied, and permits hsr1 keys carrying the destination key", async () => {
      const client = new Client({ url: srv.unixUrl, retryForMs: 2000 });
      const act = await srv.cli(["epoch", "activate", "--operator", "alice"]);
      assert.equal(act.code, 0, act.stderr);
      const epoch = await client.epoch();
      assert.equal(epoch, act.json.epoch);
      const fenced = await throws(() => client.guard(uniq("email"), { kind: "email.send", target: "t", body: "b" }), ActionDenied);
      assert.equal(fenced.state, "fenced");
      const dest = uniq("email");
      await client.withPermit(authorityKey(epoch, dest), { kind: "email.send", target: "t", body: "b" }, (permit) => {
        assert.equal(permit.key, `hsr1:${epoch}:${dest}`);
        assert.equal(permit.destinationKey, dest);
      });
    });
  });
}
