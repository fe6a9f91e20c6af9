// An OpenAI Agents SDK agent whose refund tool runs only with a tollgate
// permit. Run `tollgate serve` and set TOLLGATE_URL (and TOLLGATE_TOKEN over
// TCP). With OPENAI_API_KEY set the model calls the tool; without it the
// example calls the tool as the SDK would, to show what the model reads.
import { Agent, RunContext, run } from "@openai/agents";
import { z } from "zod";
import { Client, type Permit } from "tollgate-guard";
import { guardedTool, type ToolRefusal } from "tollgate-guard/openai-agents";

/** Stands in for a payment provider that honours idempotency keys. */
async function createRefund(entry: string, amount: number, idempotencyKey: string): Promise<{ id: string }> {
  return { id: `re_${entry}_${amount}_${idempotencyKey.length}` };
}

const client = new Client(); // TOLLGATE_URL, TOLLGATE_TOKEN

const refund = guardedTool(client, {
  name: "refund",
  description: "Refund a ledger entry to the customer.",
  parameters: z.object({ entry: z.string().regex(/^[a-z0-9-]+$/), amount: z.number().positive() }),
  kind: "refund.create",
  key: (input) => `refund:${input.entry}`,
  target: (input) => `entry:${input.entry}`,
  execute: async (input, permit: Permit) => {
    // The destination's own idempotency key is the permit's destination key.
    const r = await createRefund(input.entry, input.amount, permit.destinationKey);
    return `refunded ${input.amount} as ${r.id}`;
  },
});

const agent = new Agent({
  name: "Billing",
  instructions: "You refund ledger entries when asked. If a tool says an action waits for approval, say so and stop.",
  tools: [refund],
});

if (process.env.OPENAI_API_KEY) {
  const result = await run(agent, "Refund ledger entry le-4411, 40 EUR.");
  console.log(result.finalOutput);
} else {
  const out: string | ToolRefusal = await refund.invoke(new RunContext({}), JSON.stringify({ entry: "le-4411", amount: 40 }));
  console.log(typeof out === "string" ? out : JSON.stringify(out));
}
