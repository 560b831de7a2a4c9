/**
 * Whether memory may be used in a turn, from OpenClaw's hook context only (never from prompt or
 * model text). Fails closed: a missing agent, session or sender, a group or channel conversation, an
 * automated trigger (cron, heartbeat, hook, ...) or a refused session key gets neither recall nor writes.
 */
export const REFUSED_SESSION_KEY = /:(?:group|channel|active-memory|cron|heartbeat|hook|node|subagent)(?::|$)|:incognito:/;
const REFUSED_SESSION_NAMES = new Set(["global", "unknown"]);
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/+=#-]{0,255}$/;
const GROUP_CHAT_TYPES = new Set(["group", "channel", "supergroup", "thread", "room"]);

/** The part of OpenClaw's PluginHookAgentContext the verdict reads. */
export interface HookContext {
  agentId?: string | undefined;
  sessionKey?: string | undefined;
  sessionId?: string | undefined;
  trigger?: string | undefined;
  senderId?: string | undefined;
  chatId?: string | undefined;
  channelContext?: { sender?: { id?: unknown }; chat?: { id?: unknown; type?: unknown } } | undefined;
}

export interface Allowed {
  ok: true;
  agentId: string;
  sessionId: string;
  userId: string; // the sender's own id: the server hashes it into participantScopeHash
}

export type Verdict = Allowed | { ok: false; reason: string };

const refuse = (reason: string): Verdict => ({ ok: false, reason });

function nonBlank(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** The sender: OpenClaw's senderId, the channel's sender, else the direct chat's peer. */
export function participantOf(ctx: HookContext): string | undefined {
  return nonBlank(ctx.senderId) ?? nonBlank(ctx.channelContext?.sender?.id) ?? nonBlank(ctx.chatId);
}

export function verdictOf(ctx: HookContext, configuredAgent?: string): Verdict {
  if (ctx.trigger !== "user") return refuse(`trigger ${ctx.trigger ?? "(none)"} is not a person's turn`);
  const key = nonBlank(ctx.sessionKey);
  if (!key) return refuse("missing session key");
  if (REFUSED_SESSION_KEY.test(key) || REFUSED_SESSION_NAMES.has(key.toLowerCase())) {
    return refuse(`session key ${key.slice(0, 80)} is a group, channel or automated context`);
  }
  const chatType = ctx.channelContext?.chat?.type;
  if (typeof chatType === "string" && GROUP_CHAT_TYPES.has(chatType.toLowerCase())) {
    return refuse(`a ${chatType} conversation`);
  }
  const sessionId = nonBlank(ctx.sessionId);
  if (!sessionId || REFUSED_SESSION_NAMES.has(sessionId.toLowerCase()) || !SESSION_ID.test(sessionId)) {
    return refuse("missing or malformed session id");
  }
  const agentId = nonBlank(configuredAgent) ?? nonBlank(ctx.agentId);
  if (!agentId) return refuse("missing agent id");
  const userId = participantOf(ctx);
  if (!userId) return refuse("missing sender");
  return { ok: true, agentId, sessionId, userId };
}
