/**
 * OpenAI-compatible chat completion requests: the fields this runtime honours, validated, with
 * OpenAI's defaults.
 */
import { z } from "zod";

const textPart = z.object({ type: z.literal("text"), text: z.string() });

const message = z.object({
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: z.union([z.string(), z.array(textPart)]).nullable(),
  name: z.string().optional(),
});

/** The request body of `POST /v1/chat/completions`. */
export const chatRequestSchema = z
  .object({
    model: z.string().optional(),
    messages: z.array(message).min(1, "must hold at least one message"),
    temperature: z.number().min(0).max(2).default(1),
    top_p: z.number().gt(0).max(1).default(1),
    max_tokens: z.number().int().min(1).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).nullable().optional(),
    stop: z
      .union([z.string(), z.array(z.string()).max(4, "at most 4 stop sequences")])
      .nullable()
      .optional(),
    seed: z.number().int().nullable().optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
    n: z
      .literal(1, { error: () => "only n = 1 is supported" })
      .nullable()
      .optional(),
    user: z.string().optional(),
  })
  .passthrough();

/** A validated chat request. */
export type ChatRequest = z.infer<typeof chatRequestSchema>;
/** One chat message. */
export type ChatMessage = z.infer<typeof message>;

/** The text of a message, with array content joined. */
export function messageText(message: ChatMessage): string {
  if (message.content === null) return "";
  return typeof message.content === "string"
    ? message.content
    : message.content.map((part) => part.text).join("");
}

/** Whether a parsed body looks like a chat request. */
export function isChatBody(body: unknown): boolean {
  return typeof body === "object" && body !== null && "messages" in body;
}
