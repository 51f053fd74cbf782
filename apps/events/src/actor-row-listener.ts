// This node's ear on Postgres' actor_rows channel (migration 0019), which says when a copy of a
// user that the node trusts stops being current (actor-validity.ts). The embedded database has no
// other sessions and no channel: there nothing is trusted, and every poll's copy is checked.
import { ACTOR_ROWS_CHANNEL, NEVER_VALID, NotifiedActorValidity, type ActorValidity } from "@chat/core";
import type { Database } from "@chat/db";
import { logger } from "@chat/logger";

/** How the connection shows in pg_stat_activity. */
export const ACTOR_ROW_LISTENER_NAME = "chat-events-actor-rows";

export interface ActorRowListener {
  validity: ActorValidity;
  close(): Promise<void>;
}

export function listenForActorRows(listen: Database["listen"]): ActorRowListener {
  if (listen === null) return { validity: NEVER_VALID, close: async () => {} };
  const validity = new NotifiedActorValidity();
  // Logged once when it goes and once when it is back, not at every attempt in between.
  let down = false;
  let closing = false;
  const listener = listen(ACTOR_ROWS_CHANNEL, ACTOR_ROW_LISTENER_NAME, {
    listening() {
      validity.listening();
      if (down) logger.info("listening for actor row changes again");
      down = false;
    },
    lost(error) {
      validity.lost();
      if (down || closing) return;
      down = true;
      logger.warn("not listening for actor row changes: every poll is checked against the database until it is back", {
        error: error instanceof Error ? error.message : String(error),
      });
    },
    notified: (payload) => validity.notified(payload),
  });
  return {
    validity,
    close() {
      closing = true;
      return listener.close();
    },
  };
}
