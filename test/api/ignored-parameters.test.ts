// Zulip's `ignored_parameters_unsupported` (feature level 167): a parameter an endpoint does not
// take is never refused, and the success names it. zulip-flutter sends parameters of later
// releases whatever the server's level (idle_queue_timeout, allow_empty_topic_name,
// prev_content_sha256, capabilities this server does not know).
import request from "supertest";
import { apiDocument } from "../../apps/server/src/openapi.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiResponse } from "../support/client.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { FLUTTER_CAPABILITIES } from "../support/flutter-connection.ts";

/** What zulip-flutter sends to /register (lib/api/route/events.dart), JSON-encoded as it encodes it. */
const FLUTTER_REGISTER = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  idle_queue_timeout: JSON.stringify("mobile"),
  client_capabilities: { ...FLUTTER_CAPABILITIES, a_capability_of_a_future_release: true },
};

/** The parameters the API document says `method path` takes (query and form). */
function documentedParameters(method: string, path: string): Set<string> {
  const operation = apiDocument().paths[`/api/v1${path}`][method] as Record<string, any>;
  const names = new Set<string>((operation.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name as string));
  for (const content of Object.values((operation.requestBody?.content ?? {}) as Record<string, any>)) for (const name of Object.keys(content.schema.properties ?? {})) names.add(name);
  return names;
}

/** The ignored list a success must carry for `sent`: the names the endpoint does not take, sorted. */
function expectIgnored(res: ApiResponse, method: string, path: string, sent: string[]): void {
  expect(res.status).toBe(200);
  const documented = documentedParameters(method, path);
  const expected = sent.filter((name) => !documented.has(name)).sort();
  if (expected.length === 0) expect(res.body).not.toHaveProperty("ignored_parameters_unsupported");
  else expect(res.body.ignored_parameters_unsupported).toEqual(expected);
}

describe.each(MODES)("ignored_parameters_unsupported (%s)", (mode) => {
  let server: TestServer;
  let messageId: number;
  beforeAll(async () => {
    server = await startTestServer(mode);
    await subscribeTo(server.owner, ["ignored"]);
    messageId = await sendStreamMessage(server.owner, "ignored", "topic", "first");
  });
  afterAll(() => server.stop());

  test("/register as zulip-flutter sends it: idle_queue_timeout is listed, an unknown capability is accepted", async () => {
    const res = await server.owner.post("/register", FLUTTER_REGISTER);
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported).toEqual(["idle_queue_timeout"]);
    expect(typeof res.body.queue_id).toBe("string");
    // Unknown parameters and capabilities change nothing: the queue polls as any other.
    const poll = await server.owner.get("/events", { queue_id: res.body.queue_id, last_event_id: res.body.last_event_id, dont_block: true });
    expect(poll.body.result).toBe("success");
  });

  test("a request with no parameter the endpoint does not take has no ignored_parameters_unsupported", async () => {
    const register = await server.owner.post("/register", { event_types: ["message"], apply_markdown: true });
    expect(register.body).not.toHaveProperty("ignored_parameters_unsupported");
    const me = await server.owner.get("/users/me");
    expect(me.status).toBe(200);
    expect(me.body).not.toHaveProperty("ignored_parameters_unsupported");
    const page = await server.owner.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 });
    expect(page.body).not.toHaveProperty("ignored_parameters_unsupported");
    const settings = await server.anonymous.get("/server_settings");
    expect(settings.body).not.toHaveProperty("ignored_parameters_unsupported");
  });

  test("GET /messages with allow_empty_topic_name, through Express and the hot route alike", async () => {
    const sent = { anchor: "newest", num_before: 5, num_after: 0, narrow: [], allow_empty_topic_name: true, a_later_parameter: "x" };
    // The first request authenticates through Express and keeps the user; the next is the hot route's.
    for (let i = 0; i < 3; i++) {
      const res = await server.owner.get("/messages", sent);
      expectIgnored(res, "get", "/messages", Object.keys(sent));
      expect(res.body.ignored_parameters_unsupported).toContain("a_later_parameter");
      expect(res.body.messages.map((m: { id: number }) => m.id)).toContain(messageId);
    }
  });

  test("GET /messages/{id} with allow_empty_topic_name", async () => {
    const sent = { apply_markdown: false, allow_empty_topic_name: true, unknown_flag: true };
    const res = await server.owner.get(`/messages/${messageId}`, sent);
    expectIgnored(res, "get", "/messages/{message_id}", Object.keys(sent));
    expect(res.body.ignored_parameters_unsupported).toContain("unknown_flag");
  });

  test("POST /messages with read_by_sender and an unknown parameter, through Express and the hot route alike", async () => {
    for (let i = 0; i < 2; i++) {
      const sent = { type: "stream", to: "ignored", topic: "sends", content: `send ${i}`, read_by_sender: true, not_a_parameter: 1 };
      const res = await server.owner.post("/messages", sent);
      expectIgnored(res, "post", "/messages", Object.keys(sent));
      expect(res.body.ignored_parameters_unsupported).toContain("not_a_parameter");
      expect(typeof res.body.id).toBe("number");
    }
  });

  test("PATCH /messages/{id} with prev_content_sha256, as zulip-flutter edits", async () => {
    const sent = { content: "first, edited", prev_content_sha256: "0".repeat(64) };
    const res = await server.owner.patch(`/messages/${messageId}`, sent);
    expectIgnored(res, "patch", "/messages/{message_id}", Object.keys(sent));
    const fetched = await server.owner.get(`/messages/${messageId}`, { apply_markdown: false });
    expect(fetched.body.message.content).toBe("first, edited");
  });

  test("parameters in the query string and in a multipart body count too; credentials do not", async () => {
    const res = await server.owner.raw("post", "/users/me/alert_words?from_query=1&api_key=secret").field("alert_words", JSON.stringify(["ignored"])).field("from_form", "yes");
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported).toEqual(["from_form", "from_query"]);
  });

  test("an endpoint whose body is a shared shape (GET /users/me) lists them as well", async () => {
    const res = await server.owner.get("/users/me", { client_gravatar: true });
    expect(res.status).toBe(200);
    expect(res.body.ignored_parameters_unsupported).toEqual(["client_gravatar"]);
  });

  test("an error answer is only the error", async () => {
    const res = await server.owner.get("/messages", { num_before: 1, num_after: 0, unknown: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: "error", msg: "Missing 'anchor' argument", code: "REQUEST_VARIABLE_MISSING", var_name: "anchor" });
  });

  test("the API document allows the key on every success body", async () => {
    for (const [path, item] of Object.entries(apiDocument().paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const schema = (operation.responses["200"]?.content?.["application/json"]?.schema ?? {}) as Record<string, any>;
        const shape = schema.$ref ? apiDocument().components.schemas[String(schema.$ref).split("/").pop()!] : schema;
        if (shape?.properties?.result?.const !== "success") continue;
        expect([method, path, shape.properties.ignored_parameters_unsupported]).toEqual([method, path, expect.objectContaining({ type: "array" })]);
      }
    }
  });

  test("endpoints outside /api/v1 list them too (the health checks)", async () => {
    const res = await request(server.baseUrl).get("/health/live?whatever=1");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: "success", msg: "", status: "ok", ignored_parameters_unsupported: ["whatever"] });
    expect((await request(server.baseUrl).get("/health/live")).body).toEqual({ result: "success", msg: "", status: "ok" });
  });
});
