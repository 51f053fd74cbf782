// Custom profile fields as Zulip 9.0 has them: the pronouns type (8), required (feature level
// 244) and display_in_profile_summary (146, at most two fields, not long text or users).
import { createTestUser, type TestUser } from "../support/users.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(MODES)("custom profile field types and flags (%s)", (mode) => {
  let server: TestServer;
  let admin: TestUser;
  let member: TestUser;

  const fields = async () => (await member.client.post("/register", { fetch_event_types: ["custom_profile_fields"] })).body;
  const create = (params: Record<string, unknown>) => admin.client.post("/realm/profile_fields", { hint: "", ...params });

  beforeAll(async () => {
    server = await startTestServer(mode);
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mel Member");
  });
  afterAll(() => server.stop());

  test("every Zulip 9.0 type is offered, pronouns included", async () => {
    const types = (await fields()).custom_profile_field_types;
    expect(Object.values(types).map((t: any) => t.id).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(types.PRONOUNS).toEqual({ id: 8, name: "Pronouns" });
  });

  test("verifyAction: a required pronouns field in the summary", async () => {
    let id = 0;
    const events = await verifyAction(member.client, ["custom_profile_fields"], async () => {
      const res = await create({ name: "Pronouns", field_type: 8, required: true, display_in_profile_summary: true });
      expect(res.body.result).toBe("success");
      id = res.body.id;
    });
    const field = { id, name: "Pronouns", type: 8, hint: "", field_data: "", order: expect.any(Number), required: true, display_in_profile_summary: true, editable_by_user: true };
    expect(events).toEqual([{ id: expect.any(Number), type: "custom_profile_fields", op: "add", fields: [field] }]);
    // A user's pronouns are short text.
    expect((await admin.client.patch(`/users/${member.id}`, { profile_data: [{ id, value: "she/her" }] })).body.result).toBe("success");
    const tooLong = await admin.client.patch(`/users/${member.id}`, { profile_data: [{ id, value: "x".repeat(51) }] });
    expect(tooLong.body).toMatchObject({ result: "error", msg: "Pronouns is too long (limit: 50 characters)" });
  });

  test("fields not in the summary say so by leaving the key out; required defaults to false", async () => {
    const res = await create({ name: "Team", field_type: 1 });
    const team = (await fields()).custom_profile_fields.find((f: { id: number }) => f.id === res.body.id);
    expect(team.required).toBe(false);
    expect(team).not.toHaveProperty("display_in_profile_summary");
  });

  test("at most two fields in the summary; long text and users never", async () => {
    expect((await create({ name: "Phone", field_type: 1, display_in_profile_summary: true })).body.result).toBe("success");
    const before = await fields();
    for (const [params, msg] of [
      [{ name: "Desk", field_type: 1, display_in_profile_summary: true }, "Only 2 custom profile fields can be displayed in the profile summary."],
    ] as const) {
      const res = await create(params);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ result: "error", msg });
    }
    const team = before.custom_profile_fields.find((f: { name: string }) => f.name === "Team");
    const third = await admin.client.patch(`/realm/profile_fields/${team.id}`, { display_in_profile_summary: true });
    expect(third.body).toMatchObject({ result: "error", msg: "Only 2 custom profile fields can be displayed in the profile summary." });
    expect((await fields()).custom_profile_fields).toEqual(before.custom_profile_fields);

    // Making room lets another in; a field already in may be saved again.
    const phone = before.custom_profile_fields.find((f: { name: string }) => f.name === "Phone");
    const pronouns = before.custom_profile_fields.find((f: { name: string }) => f.name === "Pronouns");
    expect((await admin.client.patch(`/realm/profile_fields/${pronouns.id}`, { display_in_profile_summary: true, required: false })).body.result).toBe("success");
    expect((await admin.client.patch(`/realm/profile_fields/${phone.id}`, { display_in_profile_summary: false })).body.result).toBe("success");
    const events = await verifyAction(member.client, ["custom_profile_fields"], () => admin.client.patch(`/realm/profile_fields/${team.id}`, { display_in_profile_summary: true, required: true }));
    expect(events[0].fields.find((f: { id: number }) => f.id === team.id)).toMatchObject({ required: true, display_in_profile_summary: true });
    expect(events[0].fields.find((f: { id: number }) => f.id === pronouns.id)).toMatchObject({ required: false });
  });

  test.each([
    [{ name: "Bio", field_type: 2, display_in_profile_summary: true }, "Field type not supported for display in profile summary."],
    [{ name: "Mentor", field_type: 6, display_in_profile_summary: true }, "Field type not supported for display in profile summary."],
    [{ name: "Nine", field_type: 9 }, "Invalid field type."],
    [{ name: "Flag", field_type: 1, required: "yes" }, 'Argument "required" is not valid JSON.'],
  ] as Array<[Record<string, unknown>, string]>)("%j is refused and changes nothing", async (params, msg) => {
    const before = await fields();
    // With room in the summary, so the type is what is refused.
    const team = before.custom_profile_fields.find((f: { name: string }) => f.name === "Team");
    await admin.client.patch(`/realm/profile_fields/${team.id}`, { display_in_profile_summary: false });
    const res = await create(params);
    await admin.client.patch(`/realm/profile_fields/${team.id}`, { display_in_profile_summary: true });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect((await fields()).custom_profile_fields).toEqual(before.custom_profile_fields);
  });

  test("an existing long text field cannot be put in the summary", async () => {
    const bio = await create({ name: "Biography", field_type: 2 });
    const team = (await fields()).custom_profile_fields.find((f: { name: string }) => f.name === "Team");
    await admin.client.patch(`/realm/profile_fields/${team.id}`, { display_in_profile_summary: false });
    const res = await admin.client.patch(`/realm/profile_fields/${bio.body.id}`, { display_in_profile_summary: true });
    expect(res.body).toMatchObject({ result: "error", msg: "Field type not supported for display in profile summary." });
  });

  test("members may not create or change fields", async () => {
    const res = await member.client.post("/realm/profile_fields", { name: "Sneaky", field_type: 1, required: true });
    expect(res.body).toMatchObject({ result: "error", code: "UNAUTHORIZED_PRINCIPAL" });
  });
});
