// applyEvents as /register uses it: only events that keep a fetched section current are applied,
// and an event a section cannot follow from itself marks that section to be read again.
import { appliesToFetched, applyEvents, takeStaleSections } from "../src/index.ts";

const privateMessage = (id: number, ids: number[]) => ({
  type: "message",
  message: { id, type: "private", display_recipient: ids.map((userId) => ({ id: userId })) },
  flags: [],
});

describe("applyEvents with the fetched sections", () => {
  test("an event type applies when it keeps a fetched section, by Zulip's names or the old ones", () => {
    expect(appliesToFetched("user_group", ["realm_user_groups"])).toBe(true);
    expect(appliesToFetched("user_group", ["user_group"])).toBe(true);
    expect(appliesToFetched("update_message_flags", ["starred_messages"])).toBe(true);
    expect(appliesToFetched("message", ["recent_private_conversations"])).toBe(true);
    expect(appliesToFetched("message", ["realm_user_groups"])).toBe(false);
    expect(appliesToFetched("realm_user", ["realm"])).toBe(false);
    expect(appliesToFetched("anything", null)).toBe(true);
  });

  test("events for sections that were not fetched are skipped", () => {
    const state = { max_message_id: 1, realm_user_groups: [] };
    applyEvents(state, [privateMessage(5, [1, 2])], 1, ["realm_user_groups"]);
    expect(state.max_message_id).toBe(1);
    applyEvents(state, [privateMessage(5, [1, 2])], 1, ["message"]);
    expect(state.max_message_id).toBe(5);
  });

  test("recent_private_conversations stays newest first", () => {
    const state = { recent_private_conversations: [{ max_message_id: 9, user_ids: [2] }, { max_message_id: 4, user_ids: [3] }] };
    applyEvents(state, [privateMessage(10, [1, 3]), privateMessage(11, [1]), privateMessage(12, [3, 1, 2])], 1);
    expect(state.recent_private_conversations).toEqual([
      { max_message_id: 12, user_ids: [2, 3] },
      { max_message_id: 11, user_ids: [] },
      { max_message_id: 10, user_ids: [3] },
      { max_message_id: 9, user_ids: [2] },
    ]);
  });

  test("deleting the newest message of the user or of a conversation marks that section stale", () => {
    const state = { max_message_id: 12, recent_private_conversations: [{ max_message_id: 12, user_ids: [2] }], starred_messages: [3, 12] };
    applyEvents(state, [{ type: "delete_message", message_type: "private", message_ids: [3] }], 1);
    expect(takeStaleSections(state)).toEqual([]);
    expect(state.starred_messages).toEqual([12]);
    applyEvents(state, [{ type: "delete_message", message_type: "private", message_ids: [12] }], 1);
    expect(takeStaleSections(state).sort()).toEqual(["message", "recent_private_conversations"]);
    expect(takeStaleSections(state)).toEqual([]);
    // The mark is no key of the state a client could see.
    expect(Object.keys(state).sort()).toEqual(["max_message_id", "recent_private_conversations", "starred_messages"]);
  });
});

describe("events in the shapes of today's Zulip and of 3.x", () => {
  test("marking unread marks the unread section to be read again (message_details carry no senders)", () => {
    const state = { raw_unread_msgs: {} };
    const unread = { type: "update_message_flags", op: "remove", operation: "remove", flag: "read", messages: [5], all: false, message_details: {} };
    applyEvents(state, [unread], 1);
    expect(takeStaleSections(state)).toEqual(["update_message_flags"]);
    applyEvents(state, [{ ...unread, flag: "starred" }], 1);
    expect(takeStaleSections(state)).toEqual([]);
  });

  test("peer_add / peer_remove with lists (feature level 35) or one stream and user", () => {
    const state = { subscriptions: [{ stream_id: 3, subscribers: [1] }, { stream_id: 4, subscribers: [1, 9] }] };
    applyEvents(state, [{ type: "subscription", op: "peer_add", stream_ids: [3, 4], user_ids: [8, 2] }], 1);
    expect(state.subscriptions).toEqual([{ stream_id: 3, subscribers: [1, 2, 8] }, { stream_id: 4, subscribers: [1, 2, 8, 9] }]);
    applyEvents(state, [{ type: "subscription", op: "peer_remove", stream_id: 4, user_id: 8 }], 1);
    applyEvents(state, [{ type: "subscription", op: "peer_remove", stream_ids: [3], user_ids: [2, 8] }], 1);
    expect(state.subscriptions).toEqual([{ stream_id: 3, subscribers: [1] }, { stream_id: 4, subscribers: [1, 2, 9] }]);
  });

  test("realm_user update with is_active (feature level 222) moves the user between the lists", () => {
    const erin = { user_id: 8, full_name: "Erin", is_active: true };
    const state = { realm_users: [{ user_id: 1, is_active: true }, erin], realm_non_active_users: [] as unknown[], cross_realm_bots: [] };
    applyEvents(state, [{ type: "realm_user", op: "update", person: { user_id: 8, is_active: false } }], 1);
    expect(state.realm_users).toEqual([{ user_id: 1, is_active: true }]);
    expect(state.realm_non_active_users).toEqual([{ ...erin, is_active: false }]);
    applyEvents(state, [{ type: "realm_user", op: "update", person: { user_id: 8, is_active: true } }], 1);
    expect(state.realm_users).toEqual([{ user_id: 1, is_active: true }, erin]);
    expect(state.realm_non_active_users).toEqual([]);
  });
});
