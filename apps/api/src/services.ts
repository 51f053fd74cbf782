import type { JobQueue } from "@chat/bus";
import type { PrismaClient } from "@chat/db";
import type { ActionRunner, ActorCache, MessageCache, ServerContext } from "@chat/core";
import type { RateLimits } from "@chat/http";
import type { UploadConfig } from "@chat/config";
import type { FileStorage } from "@chat/storage";

/** What the API tier's routes need; built once per process by the server. */
export interface ApiServices {
  prisma: PrismaClient;
  actions: ActionRunner;
  ctx: ServerContext;
  /** This node's copy of the messages GET /messages has served. */
  messageCache: MessageCache;
  /** This node's copy of the users GET /messages has authenticated. */
  actorCache: ActorCache;
  /** Requests per user and per address, failed logins (rate-limit.ts). */
  rateLimits: RateLimits;
  /** Where uploads, avatars and custom emoji live. */
  storage: FileStorage;
  uploads: UploadConfig;
  /** The bus's job queue: emails are queued here for the worker tier to send. */
  jobs: JobQueue;
}
