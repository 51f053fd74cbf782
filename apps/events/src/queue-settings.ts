import type { QueueTarget } from "@chat/bus";
import type { RegisterOptions } from "@chat/core";

/** What a queue remembers of its /register call, stored with the queue (never in one node's memory). */
export type QueueSettings = Omit<RegisterOptions, "includeSubscribers" | "allPublicStreams" | "realmUri">;

export function queueSettings(queue: QueueTarget): QueueSettings {
  return queue.settings as unknown as QueueSettings;
}
