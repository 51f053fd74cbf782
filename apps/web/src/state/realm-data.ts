// Users, streams, subscriptions, the organization's and the user's settings: filled from /register
// and kept current by their events (realm_user, stream, subscription, realm, user_settings).
import { onEvent, onRegister } from "./events";
import {
  myUserId,
  realm,
  realmEmoji,
  registered,
  streamsById,
  subscriptionsById,
  userSettings,
  usersById,
  withEntry,
  type RealmState,
  type Stream,
  type Subscription,
  type User,
} from "./store";

onRegister((state) => {
  registered.value = state;
  myUserId.value = state.user_id ?? 0;
  const users = new Map<number, User>();
  for (const list of [state.realm_users, state.realm_non_active_users, state.cross_realm_bots]) for (const user of list ?? []) users.set(user.user_id, user);
  usersById.value = users;
  subscriptionsById.value = new Map((state.subscriptions ?? []).map((sub) => [sub.stream_id, sub]));
  const streams = new Map<number, Stream>();
  for (const stream of state.streams ?? []) streams.set(stream.stream_id, stream);
  for (const list of [state.subscriptions, state.unsubscribed, state.never_subscribed]) for (const stream of list ?? []) if (!streams.has(stream.stream_id)) streams.set(stream.stream_id, stream as Stream);
  streamsById.value = streams;
  const realmFields: RealmState = {};
  for (const [key, value] of Object.entries(state)) if (key.startsWith("realm_") || key.startsWith("max_") || key.startsWith("server_")) realmFields[key] = value;
  realm.value = realmFields;
  userSettings.value = state.user_settings ?? {};
  realmEmoji.value = state.realm_emoji ?? {};
});

onEvent("realm_emoji", (event) => {
  realmEmoji.value = event.realm_emoji;
});

onEvent("realm_user", (event) => {
  if (event.op === "add") usersById.value = withEntry(usersById.value, event.person.user_id, event.person);
  else if (event.op === "remove") {
    const user = usersById.value.get(event.person.user_id);
    if (user) usersById.value = withEntry(usersById.value, user.user_id, { ...user, is_active: false });
  } else if (event.op === "update") {
    const { person } = event;
    const user = usersById.value.get(person.user_id);
    if (!user) return;
    const next: User = { ...user };
    if (person.full_name !== undefined) next.full_name = person.full_name;
    if (person.avatar_url !== undefined) next.avatar_url = person.avatar_url;
    if (person.avatar_version !== undefined) next.avatar_version = person.avatar_version;
    if (person.timezone !== undefined) next.timezone = person.timezone;
    if (person.new_email !== undefined) next.email = person.new_email;
    if (person.delivery_email !== undefined) next.delivery_email = person.delivery_email;
    if (person.is_active !== undefined) next.is_active = person.is_active;
    if (person.bot_owner_id !== undefined) next.bot_owner_id = person.bot_owner_id;
    if (person.role !== undefined) {
      next.role = person.role;
      next.is_admin = person.role <= 200;
      next.is_owner = person.role === 100;
      next.is_guest = person.role === 600;
    }
    if (person.custom_profile_field) {
      const field = person.custom_profile_field;
      const data = { ...(next.profile_data ?? {}) };
      if (field.value === null) delete data[String(field.id)];
      else data[String(field.id)] = { value: field.value, rendered_value: field.rendered_value ?? null };
      next.profile_data = data;
    }
    usersById.value = withEntry(usersById.value, user.user_id, next);
  }
});

onEvent("stream", (event) => {
  if (event.op === "create" || event.op === "occupy") {
    const next = new Map(streamsById.value);
    for (const stream of event.streams) next.set(stream.stream_id, stream);
    streamsById.value = next;
  } else if (event.op === "delete" || event.op === "vacate") {
    const streams = new Map(streamsById.value);
    const subs = new Map(subscriptionsById.value);
    for (const stream of event.streams) {
      streams.delete(stream.stream_id);
      if (event.op === "delete") subs.delete(stream.stream_id);
    }
    streamsById.value = streams;
    subscriptionsById.value = subs;
  } else if (event.op === "update") {
    const patch: Record<string, unknown> = { [event.property]: event.value };
    if (event.rendered_description !== undefined) patch.rendered_description = event.rendered_description;
    if (event.history_public_to_subscribers !== undefined) patch.history_public_to_subscribers = event.history_public_to_subscribers;
    const stream = streamsById.value.get(event.stream_id);
    if (stream) streamsById.value = withEntry(streamsById.value, event.stream_id, { ...stream, ...patch } as Stream);
    const sub = subscriptionsById.value.get(event.stream_id);
    if (sub) subscriptionsById.value = withEntry(subscriptionsById.value, event.stream_id, { ...sub, ...patch } as Subscription);
  }
});

onEvent("subscription", (event) => {
  if (event.op === "add") {
    const next = new Map(subscriptionsById.value);
    for (const sub of event.subscriptions) next.set(sub.stream_id, sub);
    subscriptionsById.value = next;
    const streams = new Map(streamsById.value);
    for (const sub of event.subscriptions) if (!streams.has(sub.stream_id)) streams.set(sub.stream_id, sub);
    streamsById.value = streams;
  } else if (event.op === "remove") {
    const next = new Map(subscriptionsById.value);
    for (const sub of event.subscriptions) next.delete(sub.stream_id);
    subscriptionsById.value = next;
  } else if (event.op === "update") {
    const sub = subscriptionsById.value.get(event.stream_id);
    if (!sub) return;
    const patch: Record<string, unknown> = { [event.property]: event.value };
    // in_home_view is the old, inverted name of is_muted.
    if (event.property === "in_home_view") patch.is_muted = !event.value;
    if (event.property === "is_muted") patch.in_home_view = !event.value;
    subscriptionsById.value = withEntry(subscriptionsById.value, event.stream_id, { ...sub, ...patch } as Subscription);
  }
  // peer_add / peer_remove: subscriber lists are not kept (include_subscribers false).
});

onEvent("realm", (event) => {
  if (event.op === "update") realm.value = { ...realm.value, [`realm_${event.property}`]: event.value };
  else if (event.op === "update_dict") {
    const next: RealmState = { ...realm.value };
    for (const [key, value] of Object.entries(event.data)) next[`realm_${key}`] = value;
    realm.value = next;
  }
});

onEvent("user_settings", (event) => {
  userSettings.value = { ...userSettings.value, [event.property]: event.value };
});
