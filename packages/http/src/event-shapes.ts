// The events GET /events delivers, one schema per type (and op), in the API document's
// components.schemas; `Event` is any one of them.
import type { JsonSchema } from "./params.ts";

export const EVENT_SCHEMAS: Record<string, JsonSchema> = {
  Event: { type: "object", required: ["id", "type"], properties: { id: { type: "integer" }, type: { type: "string" } }, additionalProperties: true },
};
