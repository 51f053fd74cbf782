// Where the user is: location.hash read into a route (a narrow, #settings/..., #organization/...).
// Links and code change the hash; the hashchange listener updates `route`.
import { computed, signal } from "@preact/signals";
import { narrowToHash, parseHash, type Narrow, type NarrowContext, type Route } from "../narrow";
import { myUserId, streamIdsByName, streamName, userIdsByEmail, usersById } from "./store";

/** The lookups narrow.ts needs, from the store. */
export const narrowContext = computed<NarrowContext>(() => {
  const byName = streamIdsByName.value;
  const byEmail = userIdsByEmail.value;
  const users = usersById.value;
  return {
    streamIdByName: (name) => byName.get(name.toLowerCase()),
    streamName: (id) => streamName(id),
    userIdByEmail: (email) => byEmail.get(email.toLowerCase()),
    userEmail: (id) => users.get(id)?.email,
    userName: (id) => users.get(id)?.full_name,
    myUserId: myUserId.value,
  };
});

const hash = signal(typeof location === "undefined" ? "" : location.hash);
export const route = computed<Route>(() => parseHash(hash.value, narrowContext.peek()));

/** The narrow in the centre: the route's, or the last one when an overlay (settings) is open. */
let lastNarrow: Narrow = [];
export const currentNarrow = computed<Narrow>(() => {
  const r = route.value;
  if (r.kind === "narrow") lastNarrow = r.narrow;
  return lastNarrow;
});

export function hashFor(narrow: Narrow): string {
  return narrowToHash(narrow, narrowContext.value);
}

export function goToNarrow(narrow: Narrow): void {
  location.hash = hashFor(narrow);
}

/** Leaves an overlay for the narrow shown under it. */
export function closeOverlay(): void {
  location.hash = hashFor(currentNarrow.value);
}

if (typeof window !== "undefined") window.addEventListener("hashchange", () => (hash.value = location.hash));
