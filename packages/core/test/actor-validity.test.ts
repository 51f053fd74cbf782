// What a node trusts of its copies of actors (actor-validity.ts), notification by notification,
// including the races a real connection makes rare: a notification arriving while a check of the
// same user is in flight, a reconnect while one is.
import { NEVER_VALID, NotifiedActorValidity, type ActorVersion } from "@chat/core";

const alice: ActorVersion = { userId: 1, realmId: 10, userXmin: "100", realmXmin: "200" };
const bob: ActorVersion = { userId: 2, realmId: 10, userXmin: "101", realmXmin: "200" };
const carol: ActorVersion = { userId: 3, realmId: 11, userXmin: "102", realmXmin: "201" };

function listeningValidity(): NotifiedActorValidity {
  const validity = new NotifiedActorValidity();
  validity.listening();
  return validity;
}

function trust(validity: NotifiedActorValidity, ...versions: ActorVersion[]): void {
  const ticket = validity.checkStarted();
  for (const version of versions) validity.confirm(ticket, version);
}

describe("NotifiedActorValidity", () => {
  test("a confirmed copy holds, for exactly its row versions", () => {
    const validity = listeningValidity();
    expect(validity.holds(alice)).toBe(false);
    trust(validity, alice);
    expect(validity.holds(alice)).toBe(true);
    expect(validity.holds({ ...alice, userXmin: "999" })).toBe(false);
    expect(validity.holds({ ...alice, realmXmin: "999" })).toBe(false);
  });

  test("nothing is trusted before the connection listens", () => {
    const validity = new NotifiedActorValidity();
    trust(validity, alice);
    expect(validity.holds(alice)).toBe(false);
  });

  test("a user's notification untrusts that user; a realm's, every user of that realm", () => {
    const validity = listeningValidity();
    trust(validity, alice, bob, carol);
    validity.notified("u1");
    expect([validity.holds(alice), validity.holds(bob), validity.holds(carol)]).toEqual([false, true, true]);
    trust(validity, alice);
    validity.notified("r10");
    expect([validity.holds(alice), validity.holds(bob), validity.holds(carol)]).toEqual([false, false, true]);
  });

  test("a check whose user or realm was notified while it ran is not trusted; another user's notification does not matter", () => {
    const validity = listeningValidity();
    let ticket = validity.checkStarted();
    validity.notified("u1");
    validity.notified("u2");
    validity.confirm(ticket, alice);
    validity.confirm(ticket, carol);
    expect([validity.holds(alice), validity.holds(carol)]).toEqual([false, true]);
    ticket = validity.checkStarted();
    validity.notified("r10");
    validity.confirm(ticket, bob);
    expect(validity.holds(bob)).toBe(false);
    // A check sent after the notification is trusted.
    trust(validity, alice, bob);
    expect([validity.holds(alice), validity.holds(bob)]).toEqual([true, true]);
  });

  test("a lost connection untrusts everything, and a check sent before listening again is never trusted", () => {
    const validity = listeningValidity();
    trust(validity, alice);
    const before = validity.checkStarted();
    validity.lost();
    expect(validity.holds(alice)).toBe(false);
    const whileDeaf = validity.checkStarted();
    validity.confirm(whileDeaf, bob);
    validity.listening();
    validity.confirm(before, alice);
    validity.confirm(whileDeaf, bob);
    expect([validity.holds(alice), validity.holds(bob)]).toEqual([false, false]);
    trust(validity, alice);
    expect(validity.holds(alice)).toBe(true);
  });

  test("listening again forgets what was trusted", () => {
    const validity = listeningValidity();
    trust(validity, alice);
    validity.listening();
    expect(validity.holds(alice)).toBe(false);
  });

  test("`*` (a TRUNCATE) or an unknown payload untrusts everything, checks in flight included", () => {
    for (const payload of ["*", "x1", "u", "u1x"]) {
      const validity = listeningValidity();
      trust(validity, alice);
      const ticket = validity.checkStarted();
      validity.notified(payload);
      validity.confirm(ticket, carol);
      expect([payload, validity.holds(alice), validity.holds(carol)]).toEqual([payload, false, false]);
    }
  });

  test("a check that outlived the memory of recent notifications is not trusted", () => {
    const validity = listeningValidity();
    const ticket = validity.checkStarted();
    validity.notified("u1");
    // Notifications of other users push u1's out of memory.
    for (let id = 100; id < 100 + 5000; id++) validity.notified(`u${id}`);
    validity.confirm(ticket, alice);
    expect(validity.holds(alice)).toBe(false);
    trust(validity, alice);
    expect(validity.holds(alice)).toBe(true);
  });

  test("NEVER_VALID trusts nothing", () => {
    NEVER_VALID.confirm(NEVER_VALID.checkStarted(), alice);
    expect(NEVER_VALID.holds(alice)).toBe(false);
  });
});
