// Reads behind GET /users/me/subscriptions and /register: two queries whatever the number of
// streams, one for the user's subscriptions with their streams, one for all subscriber lists.
import type { StreamModel, SubscriptionModel, Tx } from "@chat/db";

type Reader = Pick<Tx, "$queryRaw">;

export interface SubscriptionWithStream {
  subscription: SubscriptionModel;
  stream: StreamModel;
}

/**
 * The user's subscriptions (active, or every one ever, for "unsubscribed") with their streams, in
 * one query; those of archived streams (feature level 315) only with `includeArchived`.
 */
export async function subscriptionsOf(db: Reader, userId: number, options: { activeOnly: boolean; includeArchived?: boolean }): Promise<SubscriptionWithStream[]> {
  const rows = await db.$queryRaw<Array<StreamModel & SubscriptionColumns>>`
    SELECT st.*, sub.id AS sub_id, sub.active AS sub_active, sub.is_user_active AS sub_is_user_active, sub.color AS sub_color,
           sub.is_muted AS sub_is_muted, sub.pin_to_top AS sub_pin_to_top, sub.desktop_notifications AS sub_desktop_notifications,
           sub.audible_notifications AS sub_audible_notifications, sub.push_notifications AS sub_push_notifications,
           sub.email_notifications AS sub_email_notifications, sub.wildcard_mentions_notify AS sub_wildcard_mentions_notify
    FROM subscription sub JOIN stream st ON st.recipient_id = sub.recipient_id
    WHERE sub.user_id = ${userId} AND (sub.active OR NOT ${options.activeOnly}) AND (NOT st.deactivated OR ${options.includeArchived === true})
    ORDER BY st.name`;
  return rows.map((row) => {
    const { sub_id, sub_active, sub_is_user_active, sub_color, sub_is_muted, sub_pin_to_top, sub_desktop_notifications, sub_audible_notifications, sub_push_notifications, sub_email_notifications, sub_wildcard_mentions_notify, ...stream } = row;
    return {
      stream,
      subscription: {
        id: sub_id,
        user_id: userId,
        recipient_id: stream.recipient_id!,
        active: sub_active,
        is_user_active: sub_is_user_active,
        color: sub_color,
        is_muted: sub_is_muted,
        pin_to_top: sub_pin_to_top,
        desktop_notifications: sub_desktop_notifications,
        audible_notifications: sub_audible_notifications,
        push_notifications: sub_push_notifications,
        email_notifications: sub_email_notifications,
        wildcard_mentions_notify: sub_wildcard_mentions_notify,
      },
    };
  });
}

interface SubscriptionColumns {
  sub_id: number;
  sub_active: boolean;
  sub_is_user_active: boolean;
  sub_color: string;
  sub_is_muted: boolean;
  sub_pin_to_top: boolean;
  sub_desktop_notifications: boolean | null;
  sub_audible_notifications: boolean | null;
  sub_push_notifications: boolean | null;
  sub_email_notifications: boolean | null;
  sub_wildcard_mentions_notify: boolean | null;
}

/** Active subscribers of each recipient, as user ids (events, /register) or emails (GET subscriptions). */
export async function subscribersByRecipient(db: Reader, recipientIds: number[], as: "ids" | "emails"): Promise<Map<number, number[] | string[]>> {
  if (recipientIds.length === 0) return new Map();
  const rows =
    as === "ids"
      ? await db.$queryRaw<{ recipient_id: number; members: number[] }[]>`
          SELECT recipient_id, array_agg(user_id ORDER BY user_id) AS members FROM subscription
          WHERE recipient_id = ANY(${recipientIds}::int[]) AND active AND is_user_active GROUP BY recipient_id`
      : await db.$queryRaw<{ recipient_id: number; members: string[] }[]>`
          SELECT s.recipient_id, array_agg(u.email ORDER BY u.id) AS members FROM subscription s JOIN user_profile u ON u.id = s.user_id
          WHERE s.recipient_id = ANY(${recipientIds}::int[]) AND s.active AND s.is_user_active GROUP BY s.recipient_id`;
  return new Map(rows.map((row) => [row.recipient_id, row.members]));
}
