/**
 * Explicit memory writes, as the Python SDK's `memory_action`: `add` stores a fact, `replace` stores
 * one that supersedes the fact it names; any other action stores nothing. The fact is written
 * `trusted` (it comes through the host's path); its origin says who asked: `stated` for the host,
 * `derived` for a model's tool call, so the server's trust policy applies to the latter.
 */
import { canonicalJson, type Json, sha256Hex } from "@engramdb/client";

import { clean, FACT_CHARS } from "./capture.ts";

export const ACTIONS = ["add", "replace"] as const;
const SUBJECT_CHARS = 256;
const KIND_CHARS = 64;

export interface MemoryAction {
  action: string;
  subject: string;
  kind: string;
  text: string;
  replaces?: string | undefined; // the factId a replace supersedes
}

/** The fact fields of a supported action, or why nothing is written. */
export function factFields(request: MemoryAction): Record<string, Json> | string {
  if (request.action !== "add" && request.action !== "replace") return `unsupported memory action ${JSON.stringify(request.action)}`;
  const replaces = request.replaces?.trim();
  if (request.action === "replace" && !replaces) return "a replace names the fact it replaces";
  const subject = request.subject.trim();
  const kind = request.kind.trim();
  if (!subject || subject.length > SUBJECT_CHARS) return `the subject must be 1-${SUBJECT_CHARS} characters`;
  if (!kind || kind.length > KIND_CHARS) return `the kind must be 1-${KIND_CHARS} characters`;
  const cleaned = clean(request.text, FACT_CHARS);
  if (typeof cleaned === "string") return `fact text: ${cleaned}`;
  return {
    subjectKey: subject,
    kind,
    text: cleaned.text,
    confidence: 0.9,
    active: true,
    trustClass: "trusted",
    ...(request.action === "replace" ? { supersedesFactId: replaces as string } : {}),
  };
}

/** The outbox key of a fact body: the server computes the factId (it covers the hashed participant). */
export function factKey(body: Record<string, Json>): string {
  const { validFrom: _, ...identity } = body; // the same request again is the same entry
  return `fact-${sha256Hex(canonicalJson(identity)).slice(0, 40)}`;
}
