// Topic policies the server sets by itself (Zulip 8's automatic follow and unmute, feature levels
// 214, 218 and 235; zerver/lib/message.py's visibility_policy_for_* and do_send_messages). Two
// personal settings say when a user's topic becomes followed, or unmuted in a muted stream:
// on participation (sending, reacting, a poll vote or to-do edit), on send, on initiation (sending
// the topic's first message), or never. A third follows the topics a user is mentioned in. The
// policies only ever make a topic more visible: a followed topic stays followed, and a mention
// does not follow a topic its user muted.
import { leanSql, Prisma, type StreamModel, type Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { RECIPIENT_STREAM } from "../lib/recipients.ts";
import { isGuest } from "../lib/roles.ts";
import type { Actor, UserProfile } from "../models.ts";
import { VisibilityPolicy, type VisibilityPolicyValue } from "../queries/user-topics.ts";
import { setTopicPolicyFor, setTopicPolicyForUsers } from "./user-topics.ts";

/** Values of automatically_follow_topics_policy and automatically_unmute_topics_in_muted_streams_policy. */
export const AutomaticPolicy = { ON_PARTICIPATION: 1, ON_SEND: 2, ON_INITIATION: 3, NEVER: 4 } as const;

type PolicySettings = Pick<UserProfile, "is_bot" | "automatically_follow_topics_policy" | "automatically_unmute_topics_in_muted_streams_policy">;

/** The policy one kind of action earns under the user's settings (following wins over unmuting). */
function policyOn(user: PolicySettings, when: number, streamMuted: boolean): VisibilityPolicyValue | null {
  if (user.automatically_follow_topics_policy === when) return VisibilityPolicy.FOLLOWED;
  if (streamMuted && user.automatically_unmute_topics_in_muted_streams_policy === when) return VisibilityPolicy.UNMUTED;
  return null;
}

/**
 * The policy sending a message gives the sender's topic (Zulip's visibility_policy_for_send_message),
 * or null for no change. A send is participation and a send; it is initiation when the sender can
 * see no other message in the topic, which `initiated` reads only if that decides.
 */
export async function policyAfterSend(
  user: PolicySettings,
  current: number,
  streamMuted: boolean,
  initiated: () => Promise<boolean>,
): Promise<VisibilityPolicyValue | null> {
  if (current === VisibilityPolicy.FOLLOWED) return null;
  const earned = [policyOn(user, AutomaticPolicy.ON_PARTICIPATION, streamMuted), policyOn(user, AutomaticPolicy.ON_SEND, streamMuted)];
  if (earned.includes(VisibilityPolicy.FOLLOWED)) return VisibilityPolicy.FOLLOWED;
  const unmute = earned.includes(VisibilityPolicy.UNMUTED) ? VisibilityPolicy.UNMUTED : null;
  // A topic with a policy has messages already: no initiation to look for.
  if (current !== VisibilityPolicy.INHERIT) return unmute === current ? null : unmute;
  const onInitiation = policyOn(user, AutomaticPolicy.ON_INITIATION, streamMuted);
  if (onInitiation !== null && onInitiation !== unmute && (await initiated())) return onInitiation;
  return unmute;
}

/** Whether sending to a stream can change the sender's own policy at all (Zulip's set_visibility_policy_possible). */
function senderPoliciesApply(sender: PolicySettings): boolean {
  return (
    !sender.is_bot &&
    !(sender.automatically_follow_topics_policy === AutomaticPolicy.NEVER && sender.automatically_unmute_topics_in_muted_streams_policy === AutomaticPolicy.NEVER)
  );
}

/** A stream message just written, as the automatic policies need it. */
export interface SentStreamMessage {
  id: number;
  streamId: number | null;
  recipientId: number;
  topic: string;
  /** Users the message mentions (groups' members included): the `mentioned` flag's users. */
  mentionedUserIds: number[];
}

/** Whether a sent message may change anybody's policy: when not, the send needs no more queries. */
export function mayChangePoliciesOnSend(sender: PolicySettings, message: SentStreamMessage): boolean {
  return message.streamId !== null && (senderPoliciesApply(sender) || message.mentionedUserIds.length > 0);
}

/** What a send changes: the sender's new policy (or null), and who a mention makes follow the topic. */
export interface PoliciesOnSend {
  sender: VisibilityPolicyValue | null;
  mentioned: number[];
}

interface SenderTopicRow {
  policy: number | null;
  stream_muted: boolean | null;
  /** Another message of the topic the sender can see: the send is no initiation. */
  seen_before: boolean;
}

/**
 * What sending the message changes in topic policies (Zulip's do_send_messages), read only: the
 * sender's policy by their settings, and those mentioned who follow the topics they are mentioned
 * in (recipients who are people, and have not muted or followed the topic). Runs outside a
 * transaction on the hot path, so that a send that changes nothing costs one read.
 */
export async function planPoliciesOnSend(db: Parameters<typeof leanSql>[0], sender: Actor, message: SentStreamMessage): Promise<PoliciesOnSend> {
  if (message.streamId === null) return { sender: null, mentioned: [] };
  const [senderPolicy, mentioned] = await Promise.all([
    senderPoliciesApply(sender) ? senderPolicyOnSend(db, sender, message) : null,
    message.mentionedUserIds.length === 0 ? [] : followersByMention(db, sender.realm_id, message),
  ]);
  return { sender: senderPolicy, mentioned };
}

async function senderPolicyOnSend(db: Parameters<typeof leanSql>[0], sender: Actor, message: SentStreamMessage): Promise<VisibilityPolicyValue | null> {
  // Whether the sender saw the topic before: its other messages if they may read the stream's
  // history (Zulip's can_access_stream_history), else the other messages they received. A CASE
  // runs only the branch it takes.
  const [row] = await leanSql(db).query<SenderTopicRow>(Prisma.sql`
    WITH target AS (
      SELECT s.id, s.recipient_id, s.invite_only, s.history_public_to_subscribers,
        (SELECT sub.is_muted FROM subscription sub WHERE sub.user_id = ${sender.id} AND sub.recipient_id = s.recipient_id AND sub.active) AS stream_muted
      FROM stream s WHERE s.id = ${message.streamId}
    )
    SELECT t.stream_muted,
      (SELECT ut.visibility_policy FROM user_topic ut
        WHERE ut.user_id = ${sender.id} AND ut.stream_id = t.id AND lower(ut.topic_name) = lower(${message.topic})) AS policy,
      CASE WHEN t.history_public_to_subscribers AND ((NOT t.invite_only AND NOT ${isGuest(sender)}) OR t.stream_muted IS NOT NULL)
        THEN EXISTS (
          SELECT 1 FROM message m WHERE m.recipient_id = t.recipient_id AND upper(m.subject) = upper(${message.topic}) AND m.id <> ${message.id})
        ELSE EXISTS (
          SELECT 1 FROM user_message um JOIN message m ON m.id = um.message_id
          WHERE um.user_id = ${sender.id} AND m.recipient_id = t.recipient_id AND upper(m.subject) = upper(${message.topic}) AND m.id <> ${message.id})
      END AS seen_before
    FROM target t`);
  if (!row) return null;
  return policyAfterSend(sender, row.policy ?? VisibilityPolicy.INHERIT, row.stream_muted === true, async () => !row.seen_before);
}

/**
 * Applies what sending the message changes in topic policies (planPoliciesOnSend), read again
 * with every user it changes locked, in id order. Each change sends `muted_topics` and
 * `user_topic` to its user. Returns the sender's new policy, the send's
 * `automatic_new_visibility_policy` (feature level 218), or null.
 */
export async function applyPoliciesOnSend(tx: Tx, events: EventRecorder, sender: Actor, message: SentStreamMessage): Promise<VisibilityPolicyValue | null> {
  if (message.streamId === null) return null;
  const planned = await planPoliciesOnSend(tx, sender, message);
  const locked = [...new Set([...(planned.sender !== null ? [sender.id] : []), ...planned.mentioned])].sort((a, b) => a - b);
  if (locked.length === 0) return null;
  await tx.$queryRaw`SELECT id FROM user_profile WHERE id = ANY(${locked}::int[]) ORDER BY id FOR UPDATE`;
  // Under the locks, what was planned is what applies (a concurrent change is now visible).
  const { sender: senderPolicy, mentioned } = await planPoliciesOnSend(tx, sender, message);
  const stream: Pick<StreamModel, "id" | "recipient_id"> = { id: message.streamId, recipient_id: message.recipientId };
  if (senderPolicy !== null) await setTopicPolicyFor(tx, events, sender.id, stream, message.topic, senderPolicy);
  if (mentioned.length > 0) {
    await setTopicPolicyForUsers(tx, events, mentioned, stream, message.topic, VisibilityPolicy.FOLLOWED, (before) => before !== VisibilityPolicy.MUTED);
  }
  return senderPolicy;
}

/**
 * Those mentioned in the message whose topic a mention follows (automatically_follow_topics_where_mentioned):
 * active people subscribed to the stream, whose topic is neither muted nor followed yet.
 */
async function followersByMention(db: Parameters<typeof leanSql>[0], realmId: number, message: SentStreamMessage): Promise<number[]> {
  const rows = await leanSql(db).query<{ id: number }>(Prisma.sql`
    SELECT u.id FROM user_profile u
    WHERE u.id = ANY(${message.mentionedUserIds}::int[]) AND u.realm_id = ${realmId} AND u.is_active AND NOT u.is_bot
      AND u.automatically_follow_topics_where_mentioned
      AND EXISTS (SELECT 1 FROM subscription s WHERE s.user_id = u.id AND s.recipient_id = ${message.recipientId} AND s.active)
      AND NOT EXISTS (
        SELECT 1 FROM user_topic t WHERE t.user_id = u.id AND t.stream_id = ${message.streamId} AND lower(t.topic_name) = lower(${message.topic})
          AND t.visibility_policy IN (${VisibilityPolicy.MUTED}, ${VisibilityPolicy.FOLLOWED}))
    ORDER BY u.id`);
  return rows.map((row) => row.id);
}

/** A message a user reacted to or added a submessage to. */
export interface ParticipatedMessage {
  recipient_id: number;
  recipient_type: number;
  subject: string;
  stream: { id: number } | null;
}

/**
 * Reacting to a message or adding to its widget is participation (Zulip's do_add_reaction and
 * do_add_submessage): with a setting on participation, a subscriber's topic becomes followed, or
 * unmuted in a muted stream, unless it is followed already.
 */
export async function applyPolicyOnParticipation(tx: Tx, events: EventRecorder, user: Actor, message: ParticipatedMessage): Promise<void> {
  if (message.recipient_type !== RECIPIENT_STREAM || message.stream === null || user.is_bot) return;
  if (
    user.automatically_follow_topics_policy !== AutomaticPolicy.ON_PARTICIPATION &&
    user.automatically_unmute_topics_in_muted_streams_policy !== AutomaticPolicy.ON_PARTICIPATION
  ) {
    return;
  }
  const [row] = await tx.$queryRaw<{ stream_muted: boolean; policy: number | null }[]>`
    SELECT sub.is_muted AS stream_muted,
      (SELECT t.visibility_policy FROM user_topic t
        WHERE t.user_id = ${user.id} AND t.stream_id = ${message.stream.id} AND lower(t.topic_name) = lower(${message.subject})) AS policy
    FROM subscription sub WHERE sub.user_id = ${user.id} AND sub.recipient_id = ${message.recipient_id} AND sub.active`;
  if (!row) return;
  const policy = policyOn(user, AutomaticPolicy.ON_PARTICIPATION, row.stream_muted);
  const current = row.policy ?? VisibilityPolicy.INHERIT;
  if (policy === null || policy === current || current === VisibilityPolicy.FOLLOWED) return;
  await setTopicPolicyFor(tx, events, user.id, { id: message.stream.id, recipient_id: message.recipient_id }, message.subject, policy);
}
