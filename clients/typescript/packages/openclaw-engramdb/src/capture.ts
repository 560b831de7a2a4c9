/**
 * Capture rules, as the Python SDK's: only the latest completed user/assistant pair of a turn is
 * kept; system and developer text, tool calls and tool results are never read; secrets, command
 * output and local paths are redacted; text is normalised and bounded before any id is computed.
 */
import { redact } from "./redact.ts";

export const TURN_CHARS = 4_000;
export const FACT_CHARS = 2_000;
const SUMMARY_CHARS = 240;
const FAILED_STOPS = new Set(["error", "aborted", "length", "tooluse", "tool_calls", "content_filter"]);
const RECALL_BLOCK = /<engramdb-memory>[\s\S]*?<\/engramdb-memory>\s*/g; // what recall added to a prompt
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/g;
const PLACEHOLDER = /\[redacted:[a-z_]+\]/g;

/** One message of OpenClaw's transcript (the fields the capture reads). */
export interface Message {
  role?: unknown;
  content?: unknown;
  stopReason?: unknown;
  errorMessage?: unknown;
}

export interface Captured {
  user: string;
  assistant: string;
  summary: string;
  turnIndex: number; // the pair's user message: how many user messages came before it
  redactions: string[];
}

function partsOf(message: Message): Array<Record<string, unknown>> {
  return Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : [];
}

export function messageText(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return partsOf(message)
    .filter((p) => p && (p.type === "text" || p.type === "input_text" || p.type === "output_text"))
    .map((p) => (typeof p.text === "string" ? p.text : ""))
    .filter(Boolean)
    .join("\n");
}

function isToolStep(message: Message): boolean {
  const role = message.role;
  if (role === "tool" || role === "toolResult" || role === "function") return true;
  return role === "assistant" && partsOf(message).some((p) => p?.type === "toolCall" || p?.type === "tool_use");
}

function isFinalAnswer(message: Message): boolean {
  if (message.role !== "assistant" || isToolStep(message) || message.errorMessage) return false;
  const stop = typeof message.stopReason === "string" ? message.stopReason.toLowerCase() : "stop";
  return !FAILED_STOPS.has(stop) && messageText(message).trim() !== "";
}

/** [user, assistant, index of the user message] of the latest completed turn, or undefined. */
export function latestPair(messages: readonly Message[]): [string, string, number] | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const answer = messages[index];
    if (!answer || !isFinalAnswer(answer)) continue;
    let start = index - 1;
    while (start >= 0 && isToolStep(messages[start] as Message)) start--;
    const question = messages[start];
    if (question?.role === "user" && messageText(question).trim()) {
      return [messageText(question), messageText(answer), start];
    }
    index = start + 1; // the loop's decrement moves to start
  }
  return undefined;
}

export function normalize(input: string, limit: number): string {
  let text = input.replace(/\r\n?/g, "\n").toWellFormed().normalize("NFC");
  text = text.replace(/\t/g, "    ").replace(CONTROL, "");
  text = text.replace(/[ \t]+$/gm, "").replace(/\n{3,}/g, "\n\n").trim();
  return text.length <= limit ? text : `${text.slice(0, limit - 1).trimEnd()}…`;
}

function meaningful(text: string): boolean {
  return [...text.replace(PLACEHOLDER, "")].filter((ch) => /[\p{L}\p{N}]/u.test(ch)).length >= 2;
}

/** `text` redacted, normalised and bounded, or why nothing is kept (the Python SDK's `clean_text`). */
export function clean(text: string, limit = TURN_CHARS): { text: string; kinds: string[] } | string {
  const redacted = redact(text.replace(RECALL_BLOCK, ""));
  const cleaned = normalize(redacted.text, limit);
  if (!meaningful(cleaned)) return redacted.kinds.length ? "nothing meaningful is left after redaction" : "the text is empty";
  return { text: cleaned, kinds: redacted.kinds };
}

/** The pair to store from a completed turn's transcript, or why nothing is captured. */
export function capture(messages: readonly Message[]): Captured | string {
  const pair = latestPair(messages);
  if (!pair) return "no completed user/assistant pair";
  const user = clean(pair[0]);
  if (typeof user === "string") return `user text: ${user}`;
  const assistant = clean(pair[1]);
  if (typeof assistant === "string") return `assistant text: ${assistant}`;
  const turnIndex = messages.slice(0, pair[2]).filter((m) => m.role === "user").length;
  const flat = user.text.split(/\s+/).filter(Boolean).join(" ");
  const summary = flat.length <= SUMMARY_CHARS ? flat : `${flat.slice(0, SUMMARY_CHARS - 1).trimEnd()}…`;
  return { user: user.text, assistant: assistant.text, summary, turnIndex, redactions: [...new Set([...user.kinds, ...assistant.kinds])] };
}
