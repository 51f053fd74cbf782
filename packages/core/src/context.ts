import type { BotLimits } from "./actions/bot-limits.ts";
import type { RealmState } from "./state/realm-state-cache.ts";

/** Server-wide facts actions need besides the database (never per-request state). */
export interface ServerContext {
  /** The host clients use; stream email addresses and realm URIs are built on it. */
  externalHost: string;
  devMode: boolean;
  /** Organizations may have web-public streams and spectators (WEB_PUBLIC_STREAMS_ENABLED); unset: no. */
  webPublicStreamsEnabled?: boolean;
  /** The upload limits /register announces (max_file_upload_size_mib, realm_upload_quota). */
  uploads?: { maxFileBytes: number; realmQuotaBytes: number };
  /** Caps on active bots (MAX_BOTS_PER_USER, MAX_BOTS_PER_REALM). */
  bots: BotLimits;
  /** An event node's copy of what /register shows every member of a realm; without one, it reads them every time. */
  realmState?: RealmState;
}
