// Event shapes of today's Zulip for today's clients (a queue whose client declared a capability of
// Zulip 4.0 or later), 3.x's for the rest: subscription `update` without `email` and `name`
// (feature levels 40 and 41) and `custom_profile_fields` without `op` (45).
import { waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

const MODERN = { client_capabilities: JSON.stringify({ user_settings_object: true, notification_settings_null: true }) };
const LEGACY = { client_capabilities: JSON.stringify({ notification_settings_null: true }) };

describe.each(MODES)("modern event shapes, feature levels 40, 41 and 45 (%s)", (mode) => {
  let server: TestServer;
  let member: TestUser;
  let generalId: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    member = await createTestUser(server, "Shape Member");
    generalId = (await member.client.get("/get_stream_id", { stream: "general" })).body.stream_id;
  });
  afterAll(() => server.stop());

  const register = async (params: Record<string, unknown>, types: string[]) => (await member.client.post("/register", { event_types: JSON.stringify(types), ...params })).body.queue_id as string;

  test("subscription update: no email or name for today's clients; 3.x clients keep both", async () => {
    const modern = await register(MODERN, ["subscription"]);
    const legacy = await register(LEGACY, ["subscription"]);
    const res = await member.client.post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: generalId, property: "pin_to_top", value: true }]) });
    expect(res.body.result).toBe("success");
    const isPin = (e: Record<string, any>) => e.type === "subscription" && e.op === "update" && e.property === "pin_to_top";
    expect(await waitForEvent(member.client, modern, isPin)).toEqual({ id: expect.any(Number), type: "subscription", op: "update", stream_id: generalId, property: "pin_to_top", value: true });
    expect(await waitForEvent(member.client, legacy, isPin)).toEqual({
      id: expect.any(Number),
      type: "subscription",
      op: "update",
      stream_id: generalId,
      property: "pin_to_top",
      value: true,
      name: "general",
      email: member.email,
    });
  });

  test("both names of muting, for either kind of client, and the state follows", async () => {
    const events = await verifyAction(
      member.client,
      ["subscription"],
      () => member.client.post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: generalId, property: "is_muted", value: true }]) }),
      5000,
      MODERN,
    );
    expect(events.map((e) => [e.property, e.value, "name" in e, "email" in e])).toEqual([
      ["is_muted", true, false, false],
      ["in_home_view", false, false, false],
    ]);
  });

  test("custom_profile_fields: no op for today's clients; 3.x clients keep it", async () => {
    const modern = await register(MODERN, ["custom_profile_fields"]);
    const legacy = await register(LEGACY, ["custom_profile_fields"]);
    const created = await server.owner.post("/realm/profile_fields", { name: "Shape field", hint: "h", field_type: 1 });
    expect(created.body.result).toBe("success");
    const modernEvent = await waitForEvent(member.client, modern, (e) => e.type === "custom_profile_fields");
    expect(modernEvent).toEqual({ id: expect.any(Number), type: "custom_profile_fields", fields: expect.any(Array) });
    expect(modernEvent.fields.map((f: { name: string }) => f.name)).toContain("Shape field");
    expect(await waitForEvent(member.client, legacy, (e) => e.type === "custom_profile_fields")).toMatchObject({ type: "custom_profile_fields", op: "add" });

    const events = await verifyAction(member.client, ["custom_profile_fields"], () => server.owner.delete(`/realm/profile_fields/${created.body.id}`), 5000, MODERN);
    expect(events).toEqual([{ id: expect.any(Number), type: "custom_profile_fields", fields: expect.any(Array) }]);
  });
});
