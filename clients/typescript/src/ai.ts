/**
 * A tool of the Vercel AI SDK (`ai` 5.x) whose execute runs only with a
 * tollgate permit. Pending, denied, settled, uncertain and conflicting calls
 * return a ToolRefusal the model reads; the action's own errors are reported
 * (failed or unknown) and re-thrown to the SDK.
 *
 * @example
 * const refund = guardedTool(client, {
 *   name: "refund", description: "Refund a ledger entry",
 *   inputSchema: z.object({ entry: z.string(), amount: z.number() }),
 *   key: (i) => `refund:${i.entry}`, target: (i) => `entry:${i.entry}`,
 *   execute: (i, permit) => payments.refund(i, { idempotencyKey: permit.destinationKey }),
 * });
 */
import { tool, type Tool, type ToolCallOptions } from "ai";
import type { Client, Permit } from "./client.js";
import { runGuarded, type GuardedToolOptions, type ToolRefusal } from "./tool-answer.js";

export { toolRefusal, defaultToolKey } from "./tool-answer.js";
export type { ToolRefusal, GuardedToolOptions } from "./tool-answer.js";

/** guardedTool's options: the SDK's description and input schema, tollgate's naming of the action, and the action. */
export interface GuardedAiToolOptions<I, R> extends GuardedToolOptions<I, R> {
  /** What the tool does, for the model. */
  description?: string;
  /** The tool's input schema (a zod schema, or jsonSchema()). */
  inputSchema: Tool<I, R>["inputSchema"];
  /** The action: runs only with a permit; hand permit.destinationKey to the provider as its idempotency key. */
  execute: (input: I, permit: Permit, options: ToolCallOptions) => R | Promise<R>;
}

/**
 * An AI SDK tool whose execute runs only with a permit. name is the key you
 * give the tool in generateText's tools, used for the default kind and key.
 */
export function guardedTool<I, R>(client: Client, options: GuardedAiToolOptions<I, R>): Tool<I, R | ToolRefusal> {
  return tool<I, R | ToolRefusal>({
    description: options.description,
    inputSchema: options.inputSchema as Tool<I, R | ToolRefusal>["inputSchema"],
    execute: (input: I, callOptions: ToolCallOptions) => runGuarded(client, options, input, (permit) => options.execute(input, permit, callOptions)),
    // The SDK's conditional types cannot be resolved for generic I and R.
  } as unknown as Tool<I, R | ToolRefusal>);
}
