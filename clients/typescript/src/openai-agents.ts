/**
 * A tool of the OpenAI Agents SDK for JS (`@openai/agents`) whose execute runs
 * only with a tollgate permit. Pending, denied, settled, uncertain and
 * conflicting calls return a ToolRefusal the model reads; the action's own
 * errors are reported (failed or unknown) and re-thrown to the SDK.
 *
 * @example
 * const refund = guardedTool(client, {
 *   name: "refund", description: "Refund a ledger entry",
 *   parameters: z.object({ entry: z.string(), amount: z.number() }),
 *   key: (i) => `refund:${i.entry}`, target: (i) => `entry:${i.entry}`,
 *   execute: (i, permit) => payments.refund(i, { idempotencyKey: permit.destinationKey }),
 * });
 */
import { tool, type FunctionTool, type RunContext, type ToolExecuteArgument, type ToolInputParameters } from "@openai/agents";
import type { Client, Permit } from "./client.js";
import { runGuarded, type GuardedToolOptions, type ToolRefusal } from "./tool-answer.js";

export { toolRefusal, defaultToolKey } from "./tool-answer.js";
export type { ToolRefusal, GuardedToolOptions } from "./tool-answer.js";

type Input<S extends ToolInputParameters> = ToolExecuteArgument<S>;

/** guardedTool's options: the SDK's name, description and parameters, tollgate's naming of the action, and the action. */
export interface GuardedAgentsToolOptions<S extends ToolInputParameters, R> extends GuardedToolOptions<Input<S>, R> {
  /** What the tool does, for the model. */
  description: string;
  /** The tool's input, as a zod object schema. */
  parameters: S;
  /** The action: runs only with a permit; hand permit.destinationKey to the provider as its idempotency key. */
  execute: (input: Input<S>, permit: Permit, context?: RunContext<unknown>) => R | Promise<R>;
}

/** An Agents SDK tool whose execute runs only with a permit. */
export function guardedTool<S extends ToolInputParameters, R>(client: Client, options: GuardedAgentsToolOptions<S, R>): FunctionTool<unknown, S, R | ToolRefusal> {
  return tool({
    name: options.name,
    description: options.description,
    parameters: options.parameters,
    execute: (input: Input<S>, context?: RunContext<unknown>) => runGuarded(client, options, input, (permit) => options.execute(input, permit, context)),
    // The SDK's overloads cannot be resolved for a generic S; the object is what they take.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  } as any) as unknown as FunctionTool<unknown, S, R | ToolRefusal>;
}
