// A Vercel AI SDK tool whose execute runs only with a tollgate permit. Run
// `tollgate serve` and set TOLLGATE_URL (and TOLLGATE_TOKEN over TCP). Pass
// the tool to generateText({ model, tools: { refund }, ... }); here it is
// called as the SDK would call it, to show what the model reads.
import { z } from "zod";
import { Client, ApprovalPending } from "tollgate-guard";
import { guardedTool } from "tollgate-guard/ai";

const client = new Client(); // TOLLGATE_URL, TOLLGATE_TOKEN

export const refund = guardedTool(client, {
  name: "refund",
  description: "Refund a ledger entry to the customer.",
  inputSchema: z.object({ entry: z.string().regex(/^[a-z0-9-]+$/), amount: z.number().positive() }),
  kind: "refund.create",
  key: (input) => `refund:${input.entry}`,
  target: (input) => `entry:${input.entry}`,
  execute: async (input, permit) => ({ refunded: input.amount, idempotencyKey: permit.destinationKey }),
});

const out = await refund.execute!({ entry: "le-4412", amount: 25 }, { toolCallId: "example", messages: [] });
// The model reads either the refund or a refusal: pending, denied, settled.
console.log(JSON.stringify(out));

// Without a framework: the seed's exit-and-retry shape.
try {
  await client.withPermit("refund:le-4413", { kind: "refund.create", target: "entry:le-4413", body: { amount: 10 } }, async (permit) => {
    permit.validateForExecution();
    return "done";
  });
} catch (err) {
  if (err instanceof ApprovalPending) console.log(`waiting for an operator until ${err.expiresAt?.toISOString()}; run again later`);
  else throw err;
}
