// GET/PUT/DELETE /bot_storage, as Zulip's zerver/views/storage.py answers them, to requests made
// exactly as the python `zulip` library 0.7.1 makes them (do_api_query: strings as they are, every
// other value json.dumps'd; GET in the query string, PUT and DELETE in a form body), for
// zulip_bots' StateHandler and the welcome-message example. Then the bounds.
import { BOT_STORAGE_KEY_LIMIT, BOT_STORAGE_KEYS_PER_REQUEST, BOT_STORAGE_SIZE_LIMIT, MAX_BOT_STORAGE_KEY_LENGTH } from "@chat/core";
import { createMember } from "../support/users.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import type { ApiClient, ApiResponse } from "../support/client.ts";

/** Python's json.dumps with its defaults: ", " and ": " separators, everything past ASCII escaped. */
function pyJson(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (value !== null && typeof value === "object") return `{${Object.entries(value).map(([k, v]) => `${pyJson(k)}: ${pyJson(v)}`).join(", ")}}`;
  return JSON.stringify(value);
}

type Method = "GET" | "PUT" | "DELETE";

/** One call as zulip.Client.call_endpoint(url='bot_storage', method, request) sends it. */
async function call(client: ApiClient, method: Method, request: Record<string, unknown> = {}): Promise<ApiResponse> {
  const encoded = new URLSearchParams();
  for (const [key, value] of Object.entries(request)) encoded.append(key, typeof value === "string" ? value : pyJson(value));
  const hasParams = Object.keys(request).length > 0;
  let test = client.raw(method.toLowerCase() as "get" | "put" | "delete", "/bot_storage");
  if (method === "GET") test = test.query(encoded.toString());
  else if (hasParams) test = test.type("form").send(encoded.toString());
  const res = await test;
  return { status: res.status, body: res.body, headers: res.headers as Record<string, string> };
}

const ok = { result: "success", msg: "" };
const error = (msg: string) => ({ result: "error", msg, code: "BAD_REQUEST" });

describe.each(MODES)("bot storage (%s)", (mode) => {
  let server: TestServer;
  let botCount = 0;

  /** A bot account of its own (the server has no bots API: a member made a bot, as other tests do). */
  async function newBot(): Promise<ApiClient> {
    botCount += 1;
    const created = await createMember(server, `storage-bot-${botCount}@example.com`, `Storage Bot ${botCount}`);
    await server.running.services.db.prisma.userProfile.update({ where: { id: created.id }, data: { is_bot: true, bot_type: 1 } });
    return created.client;
  }

  const storageOf = async (client: ApiClient) => {
    const res = await call(client, "GET");
    expect(res.status).toBe(200);
    return res.body.storage as Record<string, string>;
  };

  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("starts empty", async () => {
    const bot = await newBot();
    expect((await call(bot, "GET")).body).toEqual({ ...ok, storage: {} });
  });

  test("zulip_bots' StateHandler: incrementor's puts and gets (values are json.dumps'd inside the JSON object)", async () => {
    const bot = await newBot();
    // StateHandler.put(key, value): update_storage({'storage': {key: json.dumps(value)}})
    const put = (key: string, value: unknown) => call(bot, "PUT", { storage: { [key]: JSON.stringify(value) } });
    expect((await put("number", 0)).body).toEqual(ok);
    expect((await put("message_id", null)).body).toEqual(ok);
    // StateHandler.get(key): get_storage({'keys': [key]})
    expect((await call(bot, "GET", { keys: ["number"] })).body).toEqual({ ...ok, storage: { number: "0" } });
    expect((await put("number", 1)).body).toEqual(ok);
    expect((await put("message_id", 4711)).body).toEqual(ok);
    expect((await call(bot, "GET", { keys: ["message_id"] })).body).toEqual({ ...ok, storage: { message_id: "4711" } });
    expect(await storageOf(bot)).toEqual({ number: "1", message_id: "4711" });
  });

  test("the welcome-message example: dict(enumerate(watchlist)) stored, read back whole, emptied with {}", async () => {
    const bot = await newBot();
    // json.dumps turns the int keys of dict(enumerate(...)) into strings.
    const res = await call(bot, "PUT", { storage: '{"0": "new1@example.com", "1": "new2@example.com"}' });
    expect(res.body).toEqual(ok);
    expect(Object.values(await storageOf(bot)).sort()).toEqual(["new1@example.com", "new2@example.com"]);
    expect((await call(bot, "PUT", { storage: {} })).body).toEqual(ok);
    expect(await storageOf(bot)).toEqual({ 0: "new1@example.com", 1: "new2@example.com" });
  });

  test("round trip: put, get some in the order asked, get all, overwrite, delete some, delete all", async () => {
    const bot = await newBot();
    const entries = { "entry 1": "value 1", "entry 2": "value 2", "entry 3": "value 3", "ünïcode 😀": "wert 😀\n\t\"quoted\"", "": "empty key", ["__proto__"]: "a key like any other" };
    expect((await call(bot, "PUT", { storage: entries })).body).toEqual(ok);
    const some = await call(bot, "GET", { keys: ["entry 3", "ünïcode 😀", "entry 1", "entry 3"] });
    expect(some.body).toEqual({ ...ok, storage: { "entry 3": "value 3", "ünïcode 😀": "wert 😀\n\t\"quoted\"", "entry 1": "value 1" } });
    expect(Object.keys(some.body.storage)).toEqual(["entry 3", "ünïcode 😀", "entry 1"]);
    expect(await storageOf(bot)).toEqual(entries);
    expect((await call(bot, "GET", { keys: ["__proto__", ""] })).body.storage).toEqual({ ["__proto__"]: "a key like any other", "": "empty key" });
    // An empty list is no list, as Zulip's `keys or get_keys_in_bot_storage(...)`.
    expect((await call(bot, "GET", { keys: [] })).body.storage).toEqual(entries);

    expect((await call(bot, "PUT", { storage: { "entry 1": "changed", "entry 4": "value 4" } })).body).toEqual(ok);
    expect(await storageOf(bot)).toEqual({ ...entries, "entry 1": "changed", "entry 4": "value 4" });

    expect((await call(bot, "DELETE", { keys: ["entry 1", "entry 2", "entry 1"] })).body).toEqual(ok);
    expect(Object.keys(await storageOf(bot)).sort()).toEqual(["", "__proto__", "entry 3", "entry 4", "ünïcode 😀"]);
    // `keys` in the query string of a DELETE is read too.
    const inQuery = await bot.raw("delete", "/bot_storage").query({ keys: pyJson(["entry 3"]) });
    expect(inQuery.body).toEqual(ok);
    expect(Object.keys(await storageOf(bot)).sort()).toEqual(["", "__proto__", "entry 4", "ünïcode 😀"]);

    expect((await call(bot, "DELETE")).body).toEqual(ok);
    expect(await storageOf(bot)).toEqual({});
    await call(bot, "PUT", { storage: { a: "1" } });
    expect((await call(bot, "DELETE", { keys: [] })).body).toEqual(ok);
    expect(await storageOf(bot)).toEqual({});
    // Deleting everything when there is nothing is no error (Zulip deletes an empty set).
    expect((await call(bot, "DELETE")).body).toEqual(ok);
  });

  test("a missing key fails the whole request: GET answers nothing, DELETE deletes nothing", async () => {
    const bot = await newBot();
    await call(bot, "PUT", { storage: { "key 1": "v1", "key 2": "v2" } });
    expect((await call(bot, "GET", { keys: ["key 1", "nonexistent key"] })).body).toEqual(error("Key does not exist."));
    const res = await call(bot, "DELETE", { keys: ["key 1", "nonexistent key"] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(error("Key does not exist."));
    expect(await storageOf(bot)).toEqual({ "key 1": "v1", "key 2": "v2" });
  });

  test.each([
    ["PUT", {}, "Missing 'storage' argument"],
    ["PUT", { storage: "not json" }, 'Argument "storage" is not valid JSON.'],
    ["PUT", { storage: ["a", "b"] }, "storage is not a dict"],
    ["PUT", { storage: "null" }, "storage is not a dict"],
    ["PUT", { storage: '"text"' }, "storage is not a dict"],
    ["PUT", { storage: { foo: [1, 2, 3] } }, "storage contains a value that is not a string"],
    ["PUT", { storage: { ok: "fine", number: 1 } }, "storage contains a value that is not a string"],
    ["PUT", { storage: { nothing: null } }, "storage contains a value that is not a string"],
    ["PUT", { storage: { nested: { a: "b" } } }, "storage contains a value that is not a string"],
    ["GET", { keys: "key 1" }, 'Argument "keys" is not valid JSON.'],
    ["GET", { keys: { "key 1": "v" } }, "keys is not a list"],
    ["GET", { keys: ["key 1", 2] }, "keys[1] is not a string"],
    ["DELETE", { keys: "key 1" }, 'Argument "keys" is not valid JSON.'],
    ["DELETE", { keys: "null" }, "keys is not a list"],
    ["DELETE", { keys: [null] }, "keys[0] is not a string"],
  ] as const)("%s %j is refused and changes nothing", async (method, request, msg) => {
    const bot = await newBot();
    await call(bot, "PUT", { storage: { "key 1": "v1" } });
    const res = await call(bot, method, request);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg });
    expect(await storageOf(bot)).toEqual({ "key 1": "v1" });
  });

  test("one user's storage is theirs alone: others can neither read nor delete it", async () => {
    const bot = await newBot();
    const other = await newBot();
    await call(bot, "PUT", { storage: { secret: "mine" } });
    expect((await call(other, "GET", { keys: ["secret"] })).body).toEqual(error("Key does not exist."));
    expect(await storageOf(other)).toEqual({});
    expect((await call(other, "DELETE", { keys: ["secret"] })).body).toEqual(error("Key does not exist."));
    expect((await call(other, "PUT", { storage: { secret: "theirs" } })).body).toEqual(ok);
    expect((await call(other, "DELETE")).body).toEqual(ok);
    expect(await storageOf(other)).toEqual({});
    expect(await storageOf(bot)).toEqual({ secret: "mine" });
    // Ordinary members have storage too, as in Zulip: it is the authenticated user's.
    const member = (await createMember(server, `storage-member-${mode}@example.com`, "Storage Member")).client;
    expect((await call(member, "PUT", { storage: { a: "b" } })).body).toEqual(ok);
    expect(await storageOf(member)).toEqual({ a: "b" });
    expect((await server.anonymous.get("/bot_storage")).status).toBe(401);
  });

  describe("the quota: keys plus values, in characters as Zulip counts them (code points)", () => {
    test(`a user stores up to ${BOT_STORAGE_SIZE_LIMIT} characters; a request past it writes nothing`, async () => {
      const bot = await newBot();
      // "big" + its value: exactly the limit.
      expect((await call(bot, "PUT", { storage: { big: "x".repeat(BOT_STORAGE_SIZE_LIMIT - 3) } })).body).toEqual(ok);
      const over = await call(bot, "PUT", { storage: { a: "", b: "c" } });
      expect(over.status).toBe(400);
      expect(over.body).toEqual(error(`Request exceeds storage limit by 3 characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`));
      expect(Object.keys(await storageOf(bot))).toEqual(["big"]);
      // Replacing a value counts the difference: shrink "big" by 10, then 10 characters fit.
      expect((await call(bot, "PUT", { storage: { big: "x".repeat(BOT_STORAGE_SIZE_LIMIT - 13), abc: "1234567" } })).body).toEqual(ok);
      // Growing an existing value past the limit is refused too, and leaves it as it was.
      expect((await call(bot, "PUT", { storage: { abc: "12345678" } })).body).toEqual(error(`Request exceeds storage limit by 1 characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`));
      expect((await call(bot, "GET", { keys: ["abc"] })).body.storage).toEqual({ abc: "1234567" });
      // Deleting frees the room.
      expect((await call(bot, "DELETE", { keys: ["big"] })).body).toEqual(ok);
      expect((await call(bot, "PUT", { storage: { other: "y".repeat(900_000) } })).body).toEqual(ok);
    });

    test("an emoji is one character, as Python's len() and Postgres's length() count it (JavaScript's length says two)", async () => {
      const bot = await newBot();
      expect((await call(bot, "PUT", { storage: { filler: "x".repeat(BOT_STORAGE_SIZE_LIMIT - 16) } })).body).toEqual(ok);
      // "e" + 9 emoji = 10 characters, 19 UTF-16 code units: exactly the limit.
      expect((await call(bot, "PUT", { storage: { e: "😀".repeat(9) } })).body).toEqual(ok);
      expect((await call(bot, "PUT", { storage: { e: "😀".repeat(10) } })).body).toEqual(error(`Request exceeds storage limit by 1 characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`));
      expect((await call(bot, "GET", { keys: ["e"] })).body.storage).toEqual({ e: "😀".repeat(9) });
    });

    test(`a user stores at most ${BOT_STORAGE_KEY_LIMIT} keys`, async () => {
      const bot = await newBot();
      for (let start = 0; start < BOT_STORAGE_KEY_LIMIT; start += BOT_STORAGE_KEYS_PER_REQUEST) {
        const batch = Object.fromEntries(Array.from({ length: BOT_STORAGE_KEYS_PER_REQUEST }, (_, i) => [`k${start + i}`, ""]));
        expect((await call(bot, "PUT", { storage: batch })).body).toEqual(ok);
      }
      expect((await call(bot, "PUT", { storage: { k0: "changed", one: "more", two: "more" } })).body).toEqual(
        error(`Request exceeds storage limit by 2 keys. The limit is ${BOT_STORAGE_KEY_LIMIT} keys.`),
      );
      expect((await call(bot, "GET", { keys: ["k0"] })).body.storage).toEqual({ k0: "" });
      expect((await call(bot, "PUT", { storage: { k0: "changed" } })).body).toEqual(ok);
      expect(Object.keys(await storageOf(bot))).toHaveLength(BOT_STORAGE_KEY_LIMIT);
    });

    test("concurrent PUTs from one user cannot together pass the quota", async () => {
      const bot = await newBot();
      // Eight requests of 200,000 characters each ("kN" + 199,998): any five fit, six do not.
      const puts = Array.from({ length: 8 }, (_, i) => call(bot, "PUT", { storage: { [`k${i}`]: "v".repeat(199_998) } }));
      const results = await Promise.all(puts);
      const accepted = results.filter((r) => r.status === 200);
      expect(accepted).toHaveLength(5);
      for (const refused of results.filter((r) => r.status !== 200)) {
        expect(refused.body).toEqual(error(`Request exceeds storage limit by 200000 characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`));
      }
      const stored = await storageOf(bot);
      expect(Object.keys(stored)).toHaveLength(5);
      expect(Object.entries(stored).reduce((sum, [k, v]) => sum + k.length + v.length, 0)).toBe(BOT_STORAGE_SIZE_LIMIT);
    });
  });

  describe("what the database cannot hold, and oversized requests: a clear 400, never a 500", () => {
    let bot: ApiClient;
    beforeAll(async () => {
      bot = await newBot();
      await call(bot, "PUT", { storage: { kept: "as it was" } });
    });
    afterEach(async () => {
      expect(await storageOf(bot)).toEqual({ kept: "as it was" });
    });

    test.each([
      ["PUT", { storage: { a: "x\u0000y" } }, "Value contains NULL (0x00) characters."],
      ["PUT", { storage: { "a\u0000": "x" } }, "Key contains NULL (0x00) characters."],
      // The parameter layer refuses NUL in any JSON parameter, naming it.
      ["GET", { keys: ["kept", "\u0000"] }, "keys contains NULL (0x00) characters."],
      ["DELETE", { keys: ["kept", "a\u0000b"] }, "keys contains NULL (0x00) characters."],
      // Valid JSON, but no character: a lone surrogate.
      ["PUT", { storage: '{"a": "\\ud800"}' }, "Value is not valid Unicode."],
      ["PUT", { storage: '{"\\udc00": "x"}' }, "Key is not valid Unicode."],
      ["GET", { keys: '["\\ud83d"]' }, "Key is not valid Unicode."],
      // A raw NUL in any parameter is refused before it is read.
      ["PUT", { storage: '{"a": "x\u0000"}' }, "storage contains NULL (0x00) characters."],
    ] as const)("%s %j", async (method, request, msg) => {
      const res = await call(bot, method, request);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject(error(msg));
    });

    test(`keys are at most ${MAX_BOT_STORAGE_KEY_LENGTH} characters; the longest, of four-byte characters, is stored`, async () => {
      const tooLong = await call(bot, "PUT", { storage: { ["k".repeat(MAX_BOT_STORAGE_KEY_LENGTH + 1)]: "v" } });
      expect(tooLong.body).toEqual(error(`Key is too long (limit: ${MAX_BOT_STORAGE_KEY_LENGTH} characters).`));
      const longest = "😀".repeat(MAX_BOT_STORAGE_KEY_LENGTH);
      expect((await call(bot, "PUT", { storage: { [longest]: "v" } })).body).toEqual(ok);
      expect((await call(bot, "GET", { keys: [longest] })).body.storage).toEqual({ [longest]: "v" });
      expect((await call(bot, "DELETE", { keys: [longest] })).body).toEqual(ok);
    });

    test(`a request names at most ${BOT_STORAGE_KEYS_PER_REQUEST} keys`, async () => {
      const keys = Array.from({ length: BOT_STORAGE_KEYS_PER_REQUEST + 1 }, (_, i) => `k${i}`);
      const msg = `Too many keys in one request (limit: ${BOT_STORAGE_KEYS_PER_REQUEST}).`;
      expect((await call(bot, "PUT", { storage: Object.fromEntries(keys.map((k) => [k, "v"])) })).body).toEqual(error(msg));
      expect((await call(bot, "GET", { keys })).body).toEqual(error(msg));
      expect((await call(bot, "DELETE", { keys: ["kept", ...keys] })).body).toEqual(error(msg));
    });

    test("a value past the whole quota, and a body past the server's limit", async () => {
      const res = await call(bot, "PUT", { storage: { big: "x".repeat(BOT_STORAGE_SIZE_LIMIT) } });
      expect(res.body).toEqual(error(`Request exceeds storage limit by ${"big".length + "kept".length + "as it was".length} characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`));
      const tooLarge = await call(bot, "PUT", { storage: { big: "x".repeat(6 * 1024 * 1024) } });
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body).toEqual(error("Request body too large"));
    });
  });
});
