// The server calls behind the stream browser and the stream menu.
import { api } from "../../api/client";
import { streamName } from "../actions/links";

export type SubscriptionProperty = "color" | "pin_to_top" | "is_muted" | "desktop_notifications" | "audible_notifications" | "push_notifications" | "email_notifications";

export async function subscribe(streamId: number): Promise<void> {
  await api.post("/users/me/subscriptions", { subscriptions: [{ name: streamName(streamId) }] });
}

export async function unsubscribe(streamId: number): Promise<void> {
  await api.delete("/users/me/subscriptions", { subscriptions: [streamName(streamId)] });
}

export async function setSubscriptionProperty(streamId: number, property: SubscriptionProperty, value: string | boolean): Promise<void> {
  await api.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: streamId, property, value }] });
}

export async function markStreamAsRead(streamId: number): Promise<void> {
  await api.post("/mark_stream_as_read", { stream_id: streamId });
}

export async function markTopicAsRead(streamId: number, topic: string): Promise<void> {
  await api.post("/mark_topic_as_read", { stream_id: streamId, topic_name: topic });
}

export async function setTopicPolicy(streamId: number, topic: string, policy: 0 | 1 | 2 | 3): Promise<void> {
  await api.post("/user_topics", { stream_id: streamId, topic, visibility_policy: policy });
}
