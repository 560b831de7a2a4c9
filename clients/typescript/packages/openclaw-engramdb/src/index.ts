/**
 * EngramDB memory for OpenClaw: the plugin entry OpenClaw's loader activates (openclaw.plugin.json
 * declares it, kind "memory"). Recall runs in `before_prompt_build` and prepends the memory block;
 * a completed turn (`agent_end`) becomes one episode through the durable outbox, which the plugin
 * replays when it is registered (a crash or a server that was away loses nothing).
 */
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";

import { parseConfig } from "./config.ts";
import { OpenClawMemory } from "./memory.ts";
import type { Message } from "./capture.ts";
import type { HookContext } from "./scope.ts";
import { SEARCH_TOOL, searchTool, type ToolContext } from "./tools.ts";

export { parseConfig } from "./config.ts";
export { OpenClawMemory } from "./memory.ts";
export { capture } from "./capture.ts";
export { verdictOf } from "./scope.ts";

const instances = new Map<string, OpenClawMemory>(); // one runtime per configuration in a process

function memoryFor(api: OpenClawPluginApi): OpenClawMemory {
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
    api.on("before_prompt_build", async (event, ctx) => {
      const query = event.currentUserMessage ?? event.prompt;
      const context = await memory.recall(query, ctx as HookContext);
      return context ? { prependContext: context } : undefined;
    });
    api.on("agent_end", async (event, ctx) => {
      await memory.afterTurn(event.messages as Message[], event.success, ctx as HookContext);
    });
    api.registerTool((tool) => searchTool(memory, tool as ToolContext) as never, { name: SEARCH_TOOL });
  },
};
