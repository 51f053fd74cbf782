import type { QueueTarget } from "@chat/bus";
import type { RegisterOptions } from "@chat/core";

/** What a queue remembers of its /register call, stored with the queue (never in one node's memory). */
export type QueueSettings = Omit<RegisterOptions, "includeSubscribers" | "allPublicStreams" | "realmUri" | "heartbeatSeconds"> & {
  /** The API version /register reported (restart-events.ts, apiVersionKey); none on queues from before it was recorded. */
  apiVersion?: string;
};

export function queueSettings(queue: QueueTarget): QueueSettings {
  return queue.settings as unknown as QueueSettings;
}
