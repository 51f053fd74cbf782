import type { PrismaClient, StreamModel, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { isAdmin } from "../lib/roles.ts";
import { formatStream, streamGroupValues } from "../lib/stream-format.ts";

type Reader = Pick<PrismaClient, "defaultStream" | "defaultStreamGroup" | "$queryRaw">;

const byName = (a: StreamModel, b: StreamModel) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);

/** The realm's default streams as Stream objects, sorted by name (Zulip's streams_to_dicts_sorted). */
export async function getDefaultStreams(db: Reader, realmId: number): Promise<Record<string, unknown>[]> {
  const rows = await db.defaultStream.findMany({ where: { realm_id: realmId, stream: { deactivated: false } }, include: { stream: true } });
  const streams = rows.map((row) => row.stream).sort(byName);
  const values = await streamGroupValues(db, streams);
  return streams.map((stream) => formatStream(stream, values));
}

export interface DefaultStreamGroupObject {
  id: number;
  name: string;
  description: string;
  streams: Record<string, unknown>[];
}

/** The realm's default stream groups, sorted by name, each with its streams sorted by name. */
export async function getDefaultStreamGroups(db: Reader, realmId: number): Promise<DefaultStreamGroupObject[]> {
  const groups = await db.defaultStreamGroup.findMany({ where: { realm_id: realmId }, include: { streams: { include: { stream: true } } } });
  const values = await streamGroupValues(db, groups.flatMap((group) => group.streams.map((s) => s.stream)));
  return groups
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
    .map((group) => ({
      id: group.id,
      name: group.name,
      description: group.description,
      streams: group.streams.map((s) => s.stream).filter((s) => !s.deactivated).sort(byName).map((stream) => formatStream(stream, values)),
    }));
}

/** Zulip sends default stream changes to the realm's active non-guest users. */
async function nonGuestUserIds(tx: Tx, realmId: number): Promise<number[]> {
  const rows = await tx.userProfile.findMany({ where: { realm_id: realmId, is_active: true, role: { not: 600 } }, select: { id: true } });
  return rows.map((row) => row.id);
}

async function notifyDefaultStreams(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  events.send({ type: "default_streams", default_streams: await getDefaultStreams(tx, realmId) }, await nonGuestUserIds(tx, realmId));
}

async function notifyDefaultStreamGroups(tx: Tx, events: EventRecorder, realmId: number): Promise<void> {
  events.send(
    { type: "default_stream_groups", default_stream_groups: await getDefaultStreamGroups(tx, realmId) },
    await nonGuestUserIds(tx, realmId),
  );
}

async function streamInRealm(tx: Tx, actor: Actor, streamId: number): Promise<StreamModel> {
  const stream = await tx.stream.findFirst({ where: { id: streamId, realm_id: actor.realm_id, deactivated: false } });
  if (!stream) throw badRequest("Invalid stream id");
  return stream;
}

/** POST /default_streams: administrators make a public stream a default stream. */
export async function addDefaultStream(tx: Tx, events: EventRecorder, actor: Actor, streamId: number): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const stream = await streamInRealm(tx, actor, streamId);
  if (stream.invite_only) throw badRequest("Private streams cannot be made default.");
  const created = await tx.defaultStream.createMany({ data: [{ realm_id: actor.realm_id, stream_id: stream.id }], skipDuplicates: true });
  if (created.count > 0) await notifyDefaultStreams(tx, events, actor.realm_id);
}

/** DELETE /default_streams: administrators remove a default stream. */
export async function removeDefaultStream(tx: Tx, events: EventRecorder, actor: Actor, streamId: number): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const stream = await streamInRealm(tx, actor, streamId);
  const deleted = await tx.defaultStream.deleteMany({ where: { realm_id: actor.realm_id, stream_id: stream.id } });
  if (deleted.count > 0) await notifyDefaultStreams(tx, events, actor.realm_id);
}

/** An archived stream leaves the default streams and the default stream groups (Zulip's do_deactivate_stream), each change with its event. */
export async function dropFromDefaultStreams(tx: Tx, events: EventRecorder, realmId: number, streamId: number): Promise<void> {
  const defaults = await tx.defaultStream.deleteMany({ where: { realm_id: realmId, stream_id: streamId } });
  if (defaults.count > 0) await notifyDefaultStreams(tx, events, realmId);
  const grouped = await tx.defaultStreamGroupStream.deleteMany({ where: { stream_id: streamId } });
  if (grouped.count > 0) await notifyDefaultStreamGroups(tx, events, realmId);
}

// Default stream groups -------------------------------------------------------------------------

export const MAX_DEFAULT_STREAM_GROUP_NAME_LENGTH = 60;

async function streamsByName(tx: Tx, actor: Actor, names: string[]): Promise<StreamModel[]> {
  const streams: StreamModel[] = [];
  for (const raw of names) {
    const name = raw.trim();
    const rows = await tx.$queryRaw<{ id: number }[]>`
      SELECT id FROM stream WHERE realm_id = ${actor.realm_id} AND NOT deactivated AND lower(name) = lower(${name})`;
    if (rows.length === 0) throw badRequest(`Invalid stream name '${name}'`);
    const stream = await tx.stream.findUniqueOrThrow({ where: { id: rows[0].id } });
    if (stream.invite_only) throw badRequest("Private streams cannot be made default.");
    if (!streams.some((s) => s.id === stream.id)) streams.push(stream);
  }
  return streams;
}

function checkGroupName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Invalid default stream group name ''");
  if (name.length > MAX_DEFAULT_STREAM_GROUP_NAME_LENGTH) {
    throw badRequest(`Default stream group name too long (limit: ${MAX_DEFAULT_STREAM_GROUP_NAME_LENGTH} characters)`);
  }
  return name;
}

async function checkGroupNameAvailable(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const rows = await tx.$queryRaw<{ id: number }[]>`
    SELECT id FROM default_stream_group WHERE realm_id = ${realmId} AND lower(name) = lower(${name}) AND id <> ${exceptId ?? -1}`;
  if (rows.length > 0) throw badRequest(`Default stream group '${name}' already exists`);
}

async function accessGroup(tx: Tx, actor: Actor, groupId: number) {
  const group = await tx.defaultStreamGroup.findFirst({ where: { id: groupId, realm_id: actor.realm_id }, include: { streams: true } });
  if (!group) throw badRequest(`Default stream group with id '${groupId}' does not exist.`);
  return group;
}

/** POST /default_stream_groups/create (Zulip's do_create_default_stream_group). */
export async function createDefaultStreamGroup(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  options: { name: string; description: string; streamNames: string[] },
): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const streams = await streamsByName(tx, actor, options.streamNames);
  const name = checkGroupName(options.name);
  await checkGroupNameAvailable(tx, actor.realm_id, name);
  const group = await tx.defaultStreamGroup.create({ data: { realm_id: actor.realm_id, name, description: options.description } });
  if (streams.length > 0) await tx.defaultStreamGroupStream.createMany({ data: streams.map((s) => ({ group_id: group.id, stream_id: s.id })) });
  await notifyDefaultStreamGroups(tx, events, actor.realm_id);
}

/** PATCH /default_stream_groups/{id}: new_group_name and/or new_description. */
export async function updateDefaultStreamGroup(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  groupId: number,
  changes: { name?: string; description?: string },
): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  if (!changes.name && !changes.description) throw badRequest('You must pass "new_description" or "new_group_name".');
  const group = await accessGroup(tx, actor, groupId);
  const data: { name?: string; description?: string } = {};
  if (changes.name) {
    const name = checkGroupName(changes.name);
    if (name === group.name) throw badRequest("This default stream group is already named '" + name + "'");
    await checkGroupNameAvailable(tx, actor.realm_id, name, group.id);
    data.name = name;
  }
  if (changes.description !== undefined && changes.description !== "") data.description = changes.description;
  await tx.defaultStreamGroup.update({ where: { id: group.id }, data });
  await notifyDefaultStreamGroups(tx, events, actor.realm_id);
}

/** POST /default_stream_groups/{id}/streams: op add or remove, stream_names. */
export async function updateDefaultStreamGroupStreams(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  groupId: number,
  op: "add" | "remove",
  streamNames: string[],
): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const group = await accessGroup(tx, actor, groupId);
  const streams = await streamsByName(tx, actor, streamNames);
  const current = new Set(group.streams.map((s) => s.stream_id));
  for (const stream of streams) {
    if (op === "add" && current.has(stream.id)) {
      throw badRequest(`Stream '${stream.name}' is already present in default stream group '${group.name}'`);
    }
    if (op === "remove" && !current.has(stream.id)) {
      throw badRequest(`Stream '${stream.name}' is not present in default stream group '${group.name}'`);
    }
  }
  if (op === "add") await tx.defaultStreamGroupStream.createMany({ data: streams.map((s) => ({ group_id: group.id, stream_id: s.id })) });
  else await tx.defaultStreamGroupStream.deleteMany({ where: { group_id: group.id, stream_id: { in: streams.map((s) => s.id) } } });
  await notifyDefaultStreamGroups(tx, events, actor.realm_id);
}

/** DELETE /default_stream_groups/{id}. */
export async function removeDefaultStreamGroup(tx: Tx, events: EventRecorder, actor: Actor, groupId: number): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const group = await accessGroup(tx, actor, groupId);
  await tx.defaultStreamGroup.delete({ where: { id: group.id } });
  await notifyDefaultStreamGroups(tx, events, actor.realm_id);
}
