export type * from "./types";
export type { BusLog } from "./log";
export * from "./redis";
export * from "./memory";
