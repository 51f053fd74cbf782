// Waits for what the events tier hears on Postgres' actor_rows channel (actor-validity.ts), so a
// test that changes a user and then polls polls after the node has heard of the change, as every
// poll but those in the milliseconds between a commit and its notification does.
import { once } from "node:events";
import { NotifiedActorValidity } from "@chat/core";
import type { TestServer } from "./server.ts";

const NOTIFICATION_TIMEOUT_MS = 10_000;

/** The server's listening validity; undefined in the embedded mode, which trusts nothing. */
export function notifiedValidity(server: TestServer): NotifiedActorValidity | undefined {
  const validity = server.running.events?.pollAuth.validity;
  return validity instanceof NotifiedActorValidity ? validity : undefined;
}

/**
 * Resolves once the server's events tier has handled a notification `payload` (`u<user id>`,
 * `r<realm id>`); at once in the embedded mode, where every poll is checked. Call it before the
 * change, await it after.
 */
export function actorRowNotified(server: TestServer, payload: string): Promise<void> {
  const validity = notifiedValidity(server);
  if (validity === undefined) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const heard = (heardPayload: string): void => {
      if (heardPayload !== payload) return;
      clearTimeout(timer);
      validity.off("notified", heard);
      resolve();
    };
    const timer = setTimeout(() => {
      validity.off("notified", heard);
      reject(new Error(`no actor_rows notification ${payload} within ${NOTIFICATION_TIMEOUT_MS} ms`));
    }, NOTIFICATION_TIMEOUT_MS);
    validity.on("notified", heard);
  });
}

/**
 * Resolves once the server's events tier has heard every notification of changes committed before
 * the call: Postgres delivers a listener's notifications in commit order, so it sends one of its
 * own (naming user 0, who does not exist) and waits for it. At once in the embedded mode.
 */
export async function actorRowsSettled(server: TestServer): Promise<void> {
  const heard = actorRowNotified(server, "u0");
  if (notifiedValidity(server) !== undefined) await server.running.services.db.prisma.$executeRaw`SELECT pg_notify('actor_rows', 'u0')`;
  await heard;
}

/** Resolves when the validity next says `event` ("listening" or "lost"). */
export async function nextValidityEvent(validity: NotifiedActorValidity, event: "listening" | "lost"): Promise<void> {
  await once(validity, event, { signal: AbortSignal.timeout(NOTIFICATION_TIMEOUT_MS) });
}
