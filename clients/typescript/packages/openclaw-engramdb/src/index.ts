/**
 * EngramDB memory for OpenClaw: the plugin entry OpenClaw's loader activates (openclaw.plugin.json
 * declares it, kind "memory"). OpenClaw's hooks -> what the plugin does:
 *
 *   register               the outbox replays what an earlier process left
 *   before_model_resolve   recall for the turn's prompt starts (a prefetch)
 *   before_prompt_build    the recalled block is prepended, within recallTimeoutMs, or nothing
 *   agent_end              one episode per successful turn, on disk before it is sent
 *   before_compaction      the transcript's last eligible pair, not the transcript
 *   session_start          a new session id under a known key is a switch: the prefetch is dropped
 *   session_end            a bounded flush; what the session held is released
 *   gateway_stop           a bounded flush (2 s), the worker stops; the rest stays on disk
 *   tools                  memory_search and memory_store, in the tool call's scope
 */
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";

import { parseConfig } from "./config.ts";
import { OpenClawMemory, SHUTDOWN_MS } from "./memory.ts";
import type { Message } from "./capture.ts";
import type { HookContext } from "./scope.ts";
import { SEARCH_TOOL, STORE_TOOL, searchTool, storeTool, type ToolContext } from "./tools.ts";

export { parseConfig } from "./config.ts";
export { OpenClawMemory } from "./memory.ts";
export { capture } from "./capture.ts";
export { verdictOf } from "./scope.ts";

const instances = new Map<string, OpenClawMemory>(); // one runtime per configuration in a process

/** The runtime for the plugin's configuration (one per configuration in a process). */
export function memoryFor(api: OpenClawPluginApi): OpenClawMemory {
  const config = parseConfig(api.pluginConfig as Record<string, unknown> | undefined);
  const key = JSON.stringify(config);
  let memory = instances.get(key);
  if (!memory) {
    memory = new OpenClawMemory(config, { warn: (m) => api.logger.warn(m), info: (m) => api.logger.info(m) });
    instances.set(key, memory);
    void memory.outbox.drain(); // replay what an earlier process left on disk
  }
  return memory;
}

export default {
  id: "engramdb",
  name: "EngramDB memory",
  description: "Long-term memory from an EngramDB server: recall before the prompt, an episode per completed turn.",
  register(api: OpenClawPluginApi): void {
    const memory = memoryFor(api);
    api.on("before_model_resolve", (event, ctx) => {
      memory.prefetch(event.prompt, ctx as HookContext);
    });
    api.on("before_prompt_build", async (event, ctx) => {
      const query = event.currentUserMessage ?? event.prompt;
      const context = await memory.recall(query, ctx as HookContext);
      return context ? { prependContext: context } : undefined;
    });
    api.on("agent_end", async (event, ctx) => {
      await memory.afterTurn(event.messages as Message[], event.success, ctx as HookContext);
    });
    api.on("before_compaction", async (event, ctx) => {
      await memory.beforeCompaction(event.messages, event.sessionFile, ctx as HookContext);
    });
    api.on("session_start", (event, ctx) => {
      memory.sessionStarted(ctx.sessionKey ?? event.sessionKey, event.sessionId);
    });
    api.on("session_end", async (event, ctx) => {
      await memory.endSession(ctx.sessionKey ?? event.sessionKey, event.sessionId);
    });
    api.on("gateway_stop", async () => {
      for (const [key, running] of instances) if (running === memory) instances.delete(key);
      await memory.close(SHUTDOWN_MS);
    });
    api.registerTool((tool) => searchTool(memory, tool as ToolContext) as never, { name: SEARCH_TOOL });
    api.registerTool((tool) => storeTool(memory, tool as ToolContext) as never, { name: STORE_TOOL });
  },
};
