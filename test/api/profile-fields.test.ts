import { drainEvents, waitForEvent } from "../support/events.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("custom profile fields (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;
  let guest: TestUser;

  async function fields(): Promise<Array<Record<string, any>>> {
    return (await member.client.get("/realm/profile_fields")).body.custom_fields;
  }

  async function create(params: Record<string, unknown>): Promise<number> {
    const res = await admin.client.post("/realm/profile_fields", params);
    expect(res.body).toMatchObject({ result: "success", id: expect.any(Number) });
    return res.body.id;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    guest = await createTestUser(server, "Gil Guest", "guest");
  });
  afterAll(() => server.stop());

  test("an administrator creates a field; everyone gets the full list", async () => {
    const queue = (await guest.client.post("/register", { event_types: ["custom_profile_fields"] })).body.queue_id;
    const id = await create({ name: "Phone", hint: "Work phone", field_type: 1 });
    const field = { id, name: "Phone", type: 1, hint: "Work phone", field_data: "", order: expect.any(Number), required: false, editable_by_user: true };
    expect(await fields()).toEqual([field]);
    const event = await waitForEvent(guest.client, queue, (e) => e.type === "custom_profile_fields");
    expect(event).toEqual({ id: expect.any(Number), type: "custom_profile_fields", op: "add", fields: [field] });
  });

  test.each([
    [{ name: "", field_type: 1 }, "Label cannot be blank."],
    [{ name: "x".repeat(41), field_type: 1 }, "name is too long (limit: 40 characters)"],
    [{ name: "Hinty", hint: "h".repeat(81), field_type: 1 }, "hint is too long (limit: 80 characters)"],
    [{ name: "Weird", field_type: 99 }, "Invalid field type."],
    [{ name: "Phone", field_type: 1 }, "A field with that label already exists."],
    [{ name: "Pick", field_type: 3, field_data: {} }, "Field must have at least one choice."],
    [{ name: "Pick", field_type: 3, field_data: { a: { text: "A" } } }, 'field_data["a"] key is missing: order'],
    [{ name: "Pick", field_type: 3, field_data: { a: { text: "A", order: "1" }, b: { text: "A", order: "2" } } }, "'A' is duplicated"],
    [{ name: "Pick", field_type: 3, field_data: [] }, "field_data is not a dict"],
  ])("refuses bad fields (case %#)", async (params, msg) => {
    const before = await fields();
    const res = await admin.client.post("/realm/profile_fields", params);
    expect(res.body).toMatchObject({ result: "error", msg, code: "BAD_REQUEST" });
    expect(await fields()).toEqual(before);
  });

  test("members and guests cannot manage fields", async () => {
    const [field] = await fields();
    for (const user of [member, guest]) {
      expect((await user.client.post("/realm/profile_fields", { name: "Nope", field_type: 1 })).body.msg).toBe("Must be an organization administrator");
      expect((await user.client.patch(`/realm/profile_fields/${field.id}`, { name: "Nope" })).body.msg).toBe("Must be an organization administrator");
      expect((await user.client.delete(`/realm/profile_fields/${field.id}`)).body.msg).toBe("Must be an organization administrator");
      expect((await user.client.patch("/realm/profile_fields", { order: [field.id] })).body.msg).toBe("Must be an organization administrator");
    }
  });

  test("update, reorder and delete, each keeping the register state current", async () => {
    const a = await create({ name: "Alpha", field_type: 2 });
    const b = await create({ name: "Beta", field_type: 3, field_data: { x: { text: "X", order: "1" } } });
    await verifyAction(member.client, ["custom_profile_fields"], () => admin.client.patch(`/realm/profile_fields/${a}`, { name: "Alpha 2", hint: "new" }));
    const ids = (await fields()).map((f) => f.id);
    await verifyAction(member.client, ["custom_profile_fields"], () => admin.client.patch("/realm/profile_fields", { order: [...ids].reverse() }));
    expect((await fields()).map((f) => f.id)).toEqual([...ids].reverse());
    await verifyAction(member.client, ["custom_profile_fields"], () => admin.client.delete(`/realm/profile_fields/${b}`));
    expect((await admin.client.delete(`/realm/profile_fields/${b}`)).body).toEqual({ result: "error", msg: `Field id ${b} not found.`, code: "BAD_REQUEST" });
    expect((await admin.client.patch(`/realm/profile_fields/${b}`, { name: "x" })).body.msg).toBe(`Field id ${b} not found.`);
    expect((await admin.client.patch("/realm/profile_fields", { order: [a] })).body.msg).toBe("Invalid order mapping.");
  });

  describe("profile_data values are checked by field type", () => {
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      ids.short = await create({ name: "Short", field_type: 1 });
      ids.long = await create({ name: "Long", field_type: 2 });
      ids.choice = await create({ name: "Choice", field_type: 3, field_data: { vim: { text: "Vim", order: "1" }, emacs: { text: "Emacs", order: "2" } } });
      ids.date = await create({ name: "Birthday", field_type: 4 });
      ids.url = await create({ name: "Site", field_type: 5 });
      ids.user = await create({ name: "Mentor", field_type: 6 });
    });

    test.each([
      ["short", "x".repeat(51), "Short is too long (limit: 50 characters)"],
      ["choice", "nano", "'nano' is not a valid choice for 'Choice'."],
      ["date", "2020-02-30", "Birthday is not a date"],
      ["date", "yesterday", "Birthday is not a date"],
      ["url", "javascript:alert(1)", "Site is not a URL"],
      ["url", "not a url", "Site is not a URL"],
      ["user", [987654], "Invalid user ID: 987654"],
      ["user", "someone", "Mentor is not a list"],
    ])("%s field refuses %j", async (key, value, msg) => {
      const res = await admin.client.patch(`/users/${member.id}`, { profile_data: [{ id: ids[key], value }] });
      expect(res.body).toMatchObject({ result: "error", msg });
      const user = await member.client.get(`/users/${member.id}`, { include_custom_profile_fields: true });
      expect(user.body.user.profile_data).not.toHaveProperty(String(ids[key]));
    });

    test("valid values are stored; long text is rendered; the realm hears realm_user update", async () => {
      const queue = (await guest.client.post("/register", { event_types: ["realm_user"] })).body.queue_id;
      const res = await admin.client.patch(`/users/${member.id}`, {
        profile_data: [
          { id: ids.short, value: "short" },
          { id: ids.long, value: "Hello **world** <b>x</b>" },
          { id: ids.choice, value: "vim" },
          { id: ids.date, value: "1990-01-31" },
          { id: ids.url, value: "https://example.com/me" },
          { id: ids.user, value: [admin.id] },
        ],
      });
      expect(res.body).toEqual({ result: "success", msg: "" });
      const data = (await member.client.get(`/users/${member.id}`, { include_custom_profile_fields: true })).body.user.profile_data;
      expect(data[ids.long]).toEqual({ value: "Hello **world** <b>x</b>", rendered_value: "<p>Hello <strong>world</strong> &lt;b&gt;x&lt;/b&gt;</p>" });
      expect(data[ids.user].value).toBe(JSON.stringify([admin.id]));
      expect(data[ids.date].value).toBe("1990-01-31");
      const event = await waitForEvent(guest.client, queue, (e) => e.person?.custom_profile_field?.id === ids.long);
      expect(event.person.custom_profile_field).toEqual({ id: ids.long, value: "Hello **world** <b>x</b>", rendered_value: data[ids.long].rendered_value });
      await drainEvents(guest.client, queue);
    });
  });
});
