/**
 * Canonical JSON, content-derived ids and scope hashing of AgentMemoryEvent v1, byte for byte
 * what the Python SDK (`engramdb.contract.canonical`) and RushDB's reference compute.
 *
 * Keys sorted by UTF-16 code units at every level, no whitespace, `undefined` dropped, `null`
 * kept, strings and numbers as `JSON.stringify` writes them, hashed as UTF-8 with SHA-256.
 */
import { createHash } from "node:crypto";

export const SCHEMA_VERSION = 1;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json | undefined };

/** The canonical JSON text of `value` (RushDB's `stableStringify`). */
export function canonicalJson(value: Json | undefined): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort(); // the default sort compares UTF-16 code units
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Lower-hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export interface EpisodeIdInput {
  runtime: string;
  agentId: string;
  profileId: string;
  externalSessionId: string;
  turnIndex: number;
  userText: string;
  assistantText: string;
  sourceEventId?: string | null;
}

/** The episode's `eventId`, as RushDB's `episodeEventId` computes it. */
export function episodeEventId(input: EpisodeIdInput): string {
  return sha256Hex(
    canonicalJson({
      schemaVersion: SCHEMA_VERSION,
      eventType: "episode",
      runtime: input.runtime,
      agentId: input.agentId,
      profileId: input.profileId,
      externalSessionId: input.externalSessionId,
      sourceEventId: input.sourceEventId ?? "",
      turnIndex: input.turnIndex,
      userText: input.userText,
      assistantText: input.assistantText,
    }),
  );
}

export interface FactIdInput {
  runtime: string;
  agentId: string;
  profileId: string;
  participantScopeHash: string;
  subjectKey: string;
  kind: string;
  sourceEventId: string;
  text: string;
}

/** The fact's `factId`, as RushDB's `factEventId` computes it (`active` is not hashed). */
export function factEventId(input: FactIdInput): string {
  return sha256Hex(
    canonicalJson({
      schemaVersion: SCHEMA_VERSION,
      eventType: "fact",
      runtime: input.runtime,
      agentId: input.agentId,
      profileId: input.profileId,
      participantScopeHash: input.participantScopeHash,
      subjectKey: input.subjectKey,
      kind: input.kind,
      sourceEventId: input.sourceEventId,
      text: input.text,
    }),
  );
}

/** RushDB's `hashScope`: SHA-256 of salt, U+001E, then the trimmed parts joined by U+001F. */
export function hashScope(parts: ReadonlyArray<string | null | undefined>, salt = ""): string {
  const normalized = parts.map((part) => (part == null ? "" : part.trim())).join("\u001f");
  return sha256Hex(`${salt}\u001e${normalized}`);
}
