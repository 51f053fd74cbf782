// A change batch travels as JSON text. Most batches are objects that are serialized to publish;
// the message write statement builds its batches' events as JSON text in Postgres (with every
// recipient's flags: 30 KiB for a stream of 1,000), so those are published as they are, without
// parsing the text into objects on the API node only to serialize them again.
import type { ChangeBatch, RoutedEvent } from "./types";

const SERIALIZED = Symbol("the batch as JSON text");

type MaybeSerialized = ChangeBatch & { readonly [SERIALIZED]?: string };

/** A batch whose events are JSON text already; `events` parses it only if somebody reads it. */
export function serializedChangeBatch(id: string, realmId: number, eventsJson: string, requestIds: string[] = []): ChangeBatch {
  let events: RoutedEvent[] | undefined;
  const batch: ChangeBatch = {
    id,
    realmId,
    get events(): RoutedEvent[] {
      return (events ??= JSON.parse(eventsJson) as RoutedEvent[]);
    },
  };
  if (requestIds.length > 0) batch.requestIds = requestIds;
  const requests = requestIds.length > 0 ? `,"requestIds":${JSON.stringify(requestIds)}` : "";
  // A symbol: JSON.stringify and spreads leave it out.
  Object.defineProperty(batch, SERIALIZED, { value: `{"id":${JSON.stringify(id)},"realmId":${realmId}${requests},"events":${eventsJson}}` });
  return batch;
}

/** The batch as published: its own text if it has one, else JSON.stringify. */
export function changeBatchJson(batch: ChangeBatch): string {
  return (batch as MaybeSerialized)[SERIALIZED] ?? JSON.stringify(batch);
}
