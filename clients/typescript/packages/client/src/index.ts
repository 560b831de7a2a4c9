export * from "./canonical.ts";
export * from "./client.ts";
export * from "./errors.ts";
export type { components, paths } from "./schema.ts";
export * from "./format.ts";
