// The framework tools, called as their SDKs call them but with no model:
// the OpenAI Agents SDK's FunctionTool.invoke (which parses and validates
// the model's JSON arguments before execute) and the AI SDK's
// tool.execute, against a real tollgate serve. The action runs only with a
// permit; pending, denied and settled are the tool's result.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { RunContext } from "@openai/agents";
import { ApprovalPending, Client } from "../dist/index.js";
import { guardedTool as agentsTool } from "../dist/openai-agents.js";
import { guardedTool as aiTool } from "../dist/ai.js";
import { backends, startServe, uniq } from "./helpers.mjs";

class Declined extends Error {}

/** Each SDK's tool over one action, and how to call it as the SDK would. */
const sdks = {
  "openai-agents": (client, spec) => {
    const t = agentsTool(client, { ...spec, parameters: spec.schema });
    assert.equal(t.type, "function");
    assert.equal(t.name, spec.name);
    return async (input) => {
      const out = await t.invoke(new RunContext({}), JSON.stringify(input), { toolCall: { type: "function_call", callId: "c1", name: spec.name, arguments: JSON.stringify(input) } });
      // The SDK hands the model a string; a structured answer is parsed back here.
      return typeof out === "string" && out.startsWith("{") ? JSON.parse(out) : out;
    };
  },
  ai: (client, spec) => {
    const t = aiTool(client, { ...spec, inputSchema: spec.schema });
    return (input) => t.execute(input, { toolCallId: "c1", messages: [] });
  },
};

for (const backend of backends()) {
  describe(`framework tools on ${backend}`, () => {
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

    it("ai: an error of tollgate's thrown by the action itself is reported unknown and re-thrown, not dressed as a refusal", async () => {
      const id = uniq("n").split(":")[1];
      const nested = new ApprovalPending("a nested guard is pending");
      const call = sdks.ai(client, {
        name: "send_email", description: "Send", schema: z.object({ to: z.string() }), kind: "email.send",
        key: (i) => `email:${id}:${i.to}`, target: (i) => `user:${i.to}`,
        execute: () => { throw nested; },
      });
      await assert.rejects(call({ to: "cy" }), (e) => e === nested);
      const st = await client.status(`email:${id}:cy`);
      assert.equal(st.state, "uncertain", "the action ran and its outcome is unknown");
    });

    for (const [sdk, make] of Object.entries(sdks)) {
      it(`${sdk}: runs the action once with a permit, then answers settled without running it`, async () => {
        const runs = [];
        const id = uniq("m").split(":")[1];
        const call = make(client, {
          name: "send_email",
          description: "Send an email",
          schema: z.object({ to: z.string(), subject: z.string() }),
          kind: "email.send",
          key: (i) => `email:${id}:${i.to.replace(/[^a-z0-9-]/g, "-")}`,
          target: (i) => `user:${i.to}`,
          execute: (i, permit) => {
            runs.push(permit.destinationKey);
            return { sent: true, to: i.to };
          },
        });
        const input = { to: "ada", subject: "hello" };
        assert.deepEqual(await call(input), { sent: true, to: "ada" });
        assert.deepEqual(runs, [`email:${id}:ada`], "the action ran once with the permit's destination key");
        const again = await call(input);
        assert.equal(again.executed, false);
        assert.equal(again.tollgate, "settled");
        assert.equal(runs.length, 1, "a settled action is not run again");
        const st = await client.status(`email:${id}:ada`);
        assert.equal(st.state, "succeeded");
      });

      it(`${sdk}: answers pending (the action not run), then runs it once an operator approved`, async () => {
        let runs = 0;
        const id = uniq("r").split(":")[1];
        const call = make(client, {
          name: "refund",
          description: "Refund a ledger entry",
          schema: z.object({ entry: z.string(), amount: z.number() }),
          kind: "refund.create",
          key: (i) => `refund:${id}:${i.entry}`,
          target: (i) => `entry:${i.entry}`,
          execute: () => ++runs,
        });
        const input = { entry: "le-1", amount: 40 };
        const pending = await call(input);
        assert.equal(pending.executed, false);
        assert.equal(pending.tollgate, "pending");
        assert.match(pending.message, /approval/);
        assert.ok(!Number.isNaN(Date.parse(pending.approval_expires_at)));
        assert.equal(runs, 0);
        const ok = await srv.cli(["approve", `refund:${id}:le-1`, "--operator", "alice"]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.equal(await call(input), 1);
        assert.equal(runs, 1);
      });

      it(`${sdk}: answers denied for a policy deny, and reports a named failure as failed`, async () => {
        let runs = 0;
        const deny = make(client, {
          name: "export_all", description: "Export", schema: z.object({ table: z.string() }), kind: "export.table",
          target: (i) => `table:${i.table}`, execute: () => ++runs,
        });
        const d = await deny({ table: "users" });
        assert.equal(d.tollgate, "denied");
        assert.equal(d.executed, false);
        assert.equal(runs, 0);

        const id = uniq("f").split(":")[1];
        const failing = make(client, {
          name: "send_email", description: "Send", schema: z.object({ to: z.string() }), kind: "email.send",
          key: (i) => `email:${id}:${i.to}`, target: (i) => `user:${i.to}`, failureTypes: [Declined],
          execute: () => { throw new Declined("mailbox full"); },
        });
        const out = await failing({ to: "bob" }).then((v) => v, (e) => e);
        // The Agents SDK turns a tool's error into text for the model; the AI SDK lets it through.
        if (sdk === "ai") assert.ok(out instanceof Declined);
        else assert.match(String(out), /mailbox full|error/i);
        const st = await client.status(`email:${id}:bob`);
        assert.equal(st.state, "failed");
      });
    }
  });
}
