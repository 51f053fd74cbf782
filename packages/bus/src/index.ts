export type * from "./types";
export { CHANGE_GROUPS, forEachEventRecipient, isAfterPosition, STREAM_START } from "./types";
export type { BusLog } from "./log";
export * from "./redis";
export * from "./memory";
export { changeBatchJson, serializedChangeBatch } from "./batch-json";
export { ReadyEvents } from "./announced-events";
