// Emoji reactions (Zulip's zerver/actions/reactions.py): check, then do. The message row is locked
// while a reaction is added or removed, so two requests for the same reaction serialise on it.
import type { Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { JsonableError, badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import {
  REACTION_TYPES,
  ZULIP_EXTRA_EMOJI,
  realmEmojiById,
  realmEmojiByName,
  unicodeEmojiByCode,
  unicodeEmojiByName,
  unicodeEmojiNameMatchesCode,
} from "../lib/emoji.ts";
import { FLAG_BITS } from "../lib/message-flags.ts";
import { accessMessage, messageRecipientUserIds, type AccessedMessage } from "../queries/messages.ts";
import { applyPolicyOnParticipation } from "./automatic-topic-policies.ts";

/** A reaction as the contract shows it inside a Message. */
export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
  user: { user_id: number; email: string; full_name: string };
}

export interface EmojiData {
  /** The emoji's canonical name: a Unicode emoji's aliases (`thumbs_up`) give its own (`+1`). */
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** Zulip's get_emoji_data: an active custom emoji wins, then the Zulip extra emoji, then Unicode. */
export async function emojiDataByName(tx: Tx, realmId: number, emojiName: string): Promise<EmojiData> {
  const custom = await realmEmojiByName(tx, realmId, emojiName);
  if (custom) return { emoji_name: emojiName, emoji_code: String(custom.id), reaction_type: "realm_emoji" };
  if ((ZULIP_EXTRA_EMOJI as readonly string[]).includes(emojiName)) {
    return { emoji_name: emojiName, emoji_code: emojiName, reaction_type: "zulip_extra_emoji" };
  }
  const unicode = unicodeEmojiByName(emojiName);
  if (unicode) return { emoji_name: unicode.name, emoji_code: unicode.code, reaction_type: "unicode_emoji" };
  throw badRequest(`Emoji '${emojiName}' does not exist`);
}

/** Zulip's check_emoji_request: whether (name, code, type) names a valid emoji for a new reaction. */
export async function checkEmojiRequest(tx: Tx, realmId: number, emojiName: string, emojiCode: string, reactionType: string): Promise<void> {
  if (reactionType === "realm_emoji") {
    const custom = await realmEmojiById(tx, realmId, emojiCode);
    if (!custom) throw badRequest("Invalid custom emoji.");
    if (custom.name !== emojiName) throw badRequest("Invalid custom emoji name.");
    if (custom.deactivated) throw badRequest("This custom emoji has been deactivated.");
  } else if (reactionType === "zulip_extra_emoji") {
    if (!(ZULIP_EXTRA_EMOJI as readonly string[]).includes(emojiCode)) throw badRequest("Invalid emoji code");
    if (emojiName !== emojiCode) throw badRequest("Invalid emoji name");
  } else if (reactionType === "unicode_emoji") {
    // Codes are compared exactly as stored: "1F600" is not Zulip's form and is refused.
    if (unicodeEmojiByCode(emojiCode)?.code !== emojiCode) throw badRequest("Invalid emoji code");
    if (!unicodeEmojiNameMatchesCode(emojiName, emojiCode)) throw badRequest("Invalid emoji name");
  } else {
    throw badRequest("Invalid emoji type.");
  }
}

function reactionEvent(actor: Actor, messageId: number, op: "add" | "remove", reaction: { emoji_name: string; emoji_code: string; reaction_type: string }) {
  return {
    type: "reaction",
    op,
    user_id: actor.id,
    user: { user_id: actor.id, email: actor.email, full_name: actor.full_name },
    message_id: messageId,
    emoji_name: reaction.emoji_name,
    emoji_code: reaction.emoji_code,
    reaction_type: reaction.reaction_type,
  };
}

/** Zulip's create_historical_user_messages: a row for a stream message the user reads without one. */
async function ensureUserMessage(tx: Tx, actor: Actor, message: AccessedMessage): Promise<void> {
  if (message.user_message_flags !== null) return;
  await tx.$executeRaw`
    INSERT INTO user_message (user_id, message_id, flags)
    SELECT ${actor.id}, m.id, ${FLAG_BITS.read | FLAG_BITS.historical} FROM message m WHERE m.id = ${message.id}
    -- As a foreign key would: a message deleted meanwhile gets no row (migration 0009).
    FOR KEY SHARE OF m
    ON CONFLICT (user_id, message_id) DO NOTHING`;
}

export interface AddReactionRequest {
  emojiName: string;
  emojiCode?: string;
  reactionType?: string;
}

/** POST /messages/{id}/reactions. */
export async function addReaction(tx: Tx, events: EventRecorder, actor: Actor, messageId: number, request: AddReactionRequest): Promise<void> {
  const message = await accessMessage(tx, actor, messageId, { lock: true });
  let emojiName = request.emojiName;
  let emojiCode = request.emojiCode;
  let reactionType = request.reactionType;
  if (emojiCode === undefined || reactionType === undefined) {
    const data = await emojiDataByName(tx, actor.realm_id, emojiName);
    // Sent by name alone, a reaction carries the emoji's canonical name, whichever alias named
    // it; a client that sends the code too chose its name, which is kept (and checked below).
    if (emojiCode === undefined) emojiName = data.emoji_name;
    emojiCode ??= data.emoji_code;
    reactionType ??= data.reaction_type;
  }

  const existing = await tx.reaction.findMany({
    where: { message_id: message.id, emoji_code: emojiCode, reaction_type: reactionType },
    select: { user_id: true, emoji_name: true },
    orderBy: { id: "asc" },
  });
  if (existing.some((r) => r.user_id === actor.id)) throw new JsonableError("Reaction already exists.", { code: "REACTION_ALREADY_EXISTS" });
  if (existing.length > 0) {
    // A vote for a reaction someone already made: its name wins, unchecked, so that the message
    // never shows two "different" reactions with one image (the emoji may since be deactivated).
    emojiName = existing[0].emoji_name;
  } else {
    await checkEmojiRequest(tx, actor.realm_id, emojiName, emojiCode, reactionType);
  }

  await ensureUserMessage(tx, actor, message);
  await tx.reaction.create({
    data: { message_id: message.id, user_id: actor.id, emoji_name: emojiName, emoji_code: emojiCode, reaction_type: reactionType },
  });
  // Reacting is participation: it may follow (or unmute) the topic for the reactor.
  await applyPolicyOnParticipation(tx, events, actor, message);
  const recipients = await messageRecipientUserIds(tx, message.id);
  events.send(reactionEvent(actor, message.id, "add", { emoji_name: emojiName, emoji_code: emojiCode, reaction_type: reactionType }), recipients);
}

export interface RemoveReactionRequest {
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

/** DELETE /messages/{id}/reactions: by code (preferred) or by name, of the given type. */
export async function removeReaction(tx: Tx, events: EventRecorder, actor: Actor, messageId: number, request: RemoveReactionRequest): Promise<void> {
  const message = await accessMessage(tx, actor, messageId, { lock: true });
  let emojiCode = request.emojiCode;
  let reactionType = request.reactionType;
  if (emojiCode === undefined) {
    if (request.emojiName === undefined) {
      throw badRequest("At least one of the following arguments must be present: emoji_name, emoji_code");
    }
    const data = await emojiDataByName(tx, actor.realm_id, request.emojiName);
    emojiCode = data.emoji_code;
    reactionType ??= data.reaction_type;
  }
  reactionType ??= "unicode_emoji";
  if (!(REACTION_TYPES as readonly string[]).includes(reactionType)) throw badRequest("Invalid emoji type.");

  const reaction = await tx.reaction.findFirst({
    where: { message_id: message.id, user_id: actor.id, emoji_code: emojiCode, reaction_type: reactionType },
  });
  if (!reaction) throw new JsonableError("Reaction doesn't exist.", { code: "REACTION_DOES_NOT_EXIST" });
  await tx.reaction.delete({ where: { id: reaction.id } });
  const recipients = await messageRecipientUserIds(tx, message.id);
  events.send(reactionEvent(actor, message.id, "remove", reaction), recipients);
}

type ReactionReader = Pick<Tx, "$queryRaw">;

/** Every message's reactions in the contract's shape, oldest first; messages without any are absent. */
export async function reactionsForMessages(db: ReactionReader, messageIds: number[]): Promise<Map<number, Reaction[]>> {
  const result = new Map<number, Reaction[]>();
  if (messageIds.length === 0) return result;
  const rows = await db.$queryRaw<Array<{ message_id: number; emoji_name: string; emoji_code: string; reaction_type: string; user_id: number; email: string; full_name: string }>>`
    SELECT r.message_id, r.emoji_name, r.emoji_code, r.reaction_type, r.user_id, u.email, u.full_name
    FROM reaction r JOIN user_profile u ON u.id = r.user_id
    WHERE r.message_id = ANY(${messageIds}::int[])
    ORDER BY r.message_id, r.id`;
  for (const row of rows) {
    const list = result.get(row.message_id) ?? [];
    list.push({
      emoji_name: row.emoji_name,
      emoji_code: row.emoji_code,
      reaction_type: row.reaction_type,
      user_id: row.user_id,
      user: { user_id: row.user_id, email: row.email, full_name: row.full_name },
    });
    result.set(row.message_id, list);
  }
  return result;
}
