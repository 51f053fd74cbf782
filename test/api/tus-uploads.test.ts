// Resumable uploads at /api/v1/tus (feature level 295), over raw HTTP exactly as the tus protocol
// 1.0.0 describes its requests (https://tus.io/protocols/resumable-upload): OPTIONS, creation
// (POST with Upload-Length and Upload-Metadata), HEAD, PATCH with Upload-Offset, termination.
// Authenticated as POST /user_uploads; the same size limit; the finished upload is the same
// attachment, and its last PATCH answers what POST /user_uploads answers. Bounded: unfinished
// uploads per user, pieces, stale uploads removed.
import http from "node:http";
import { MAX_INCOMPLETE_UPLOADS_PER_USER, sweepStaleTusUploads } from "@chat/core";
import { STORAGE_SETUPS, startStorageTestServer, type StorageTestServer } from "../support/storage.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

jest.setTimeout(120_000);

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe.each(STORAGE_SETUPS)("tus resumable uploads ($mode, $backend storage)", ({ mode, backend }) => {
  let server: StorageTestServer;
  let alice: TestUser;
  let bob: TestUser;

  const basic = (user: TestUser) => `Basic ${Buffer.from(`${user.email}:${user.client.credentials!.apiKey}`).toString("base64")}`;

  function send(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<RawAnswer> {
    const url = new URL(server.baseUrl);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, method, path, headers: { ...(body ? { "content-length": String(body.length) } : {}), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = text === "" ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on("error", reject);
      });
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  const tus = (user: TestUser, extra: Record<string, string> = {}) => ({ "tus-resumable": "1.0.0", authorization: basic(user), ...extra });

  async function create(user: TestUser, length: number, metadata = `filename ${b64("notes.txt")},filetype ${b64("text/plain")}`): Promise<string> {
    const res = await send("POST", "/api/v1/tus", tus(user, { "upload-length": String(length), "upload-metadata": metadata }));
    if (res.status !== 201) throw new Error(`creation: ${res.status} ${res.text}`);
    return res.headers.location as string;
  }

  const patch = (user: TestUser, location: string, offset: number, body: Buffer, type = "application/offset+octet-stream") =>
    send("PATCH", location, tus(user, { "upload-offset": String(offset), "content-type": type }), body);

  beforeAll(async () => {
    server = await startStorageTestServer(mode, backend);
    alice = await createTestUser(server, "Alice Tus");
    bob = await createTestUser(server, "Bob Tus");
  });
  afterAll(() => server.stop());

  test("OPTIONS says what the server supports, without credentials", async () => {
    for (const path of ["/api/v1/tus", "/api/v1/tus/abc"]) {
      const res = await send("OPTIONS", path);
      expect(res.status).toBe(204);
      expect(res.headers["tus-resumable"]).toBe("1.0.0");
      expect(res.headers["tus-version"]).toBe("1.0.0");
      expect(String(res.headers["tus-extension"]).split(",")).toEqual(expect.arrayContaining(["creation", "termination", "expiration"]));
      expect(Number(res.headers["tus-max-size"])).toBe(server.running.services.config.uploads.maxFileBytes);
      expect(res.text).toBe("");
    }
  });

  test("every other request must speak tus 1.0.0 and be authenticated", async () => {
    const none = await send("POST", "/api/v1/tus", { authorization: basic(alice), "upload-length": "3" });
    expect(none.status).toBe(412);
    expect(none.headers["tus-version"]).toBe("1.0.0");
    expect(none.json).toEqual({ result: "error", msg: "Missing Tus-Resumable header", code: "BAD_REQUEST", message: "Missing Tus-Resumable header" });
    const old = await send("POST", "/api/v1/tus", { ...tus(alice), "tus-resumable": "0.2.2", "upload-length": "3" });
    expect(old.status).toBe(412);
    const anonymous = await send("POST", "/api/v1/tus", { "tus-resumable": "1.0.0", "upload-length": "3" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.json).toMatchObject({ result: "error", code: "UNAUTHORIZED" });
    const wrongKey = await send("POST", "/api/v1/tus", { "tus-resumable": "1.0.0", "upload-length": "3", authorization: `Basic ${b64(`${alice.email}:nope`)}` });
    expect(wrongKey.status).toBe(401);
    expect(await server.running.services.db.prisma.$queryRawUnsafe<unknown[]>("SELECT id FROM tus_upload")).toEqual([]);
    // Methods the protocol does not have here.
    expect((await send("PUT", "/api/v1/tus", tus(alice))).status).toBe(405);
  });

  test("creation refuses a deferred or bad length, one past the file limit, and bad metadata", async () => {
    const deferred = await send("POST", "/api/v1/tus", tus(alice, { "upload-defer-length": "1" }));
    expect(deferred.status).toBe(411);
    expect(deferred.json).toMatchObject({ result: "error", msg: "SizeIsDeferred is not supported", message: "SizeIsDeferred is not supported" });
    expect((await send("POST", "/api/v1/tus", tus(alice))).status).toBe(411);
    for (const length of ["-1", "abc", "1e5", "99999999999999999999", ""]) {
      const res = await send("POST", "/api/v1/tus", tus(alice, { "upload-length": length }));
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ result: "error", msg: "Invalid Upload-Length" });
    }
    const max = server.running.services.config.uploads.maxFileBytes;
    const big = await send("POST", "/api/v1/tus", tus(alice, { "upload-length": String(max + 1) }));
    expect(big.status).toBe(413);
    expect(big.json).toMatchObject({ result: "error", msg: `Uploaded file is larger than the allowed limit of ${max / 1024 / 1024} MiB` });
    for (const metadata of ["filename not*base64", "filename a b c", `filename ${b64("x")},filename ${b64("y")}`, "x".repeat(5000)]) {
      expect((await send("POST", "/api/v1/tus", tus(alice, { "upload-length": "3", "upload-metadata": metadata }))).status).toBe(400);
    }
    expect(await server.running.services.db.prisma.$queryRawUnsafe<unknown[]>("SELECT id FROM tus_upload")).toEqual([]);
  });

  test("an upload in pieces: HEAD says where to resume, the last PATCH answers as POST /user_uploads, the file is an attachment", async () => {
    const content = Buffer.from("hello, resumable world");
    const location = await create(alice, content.length);
    expect(location).toMatch(/^\/api\/v1\/tus\/[A-Za-z0-9_-]{32}$/);

    const head = await send("HEAD", location, tus(alice));
    expect(head.status).toBe(200);
    expect(head.headers["upload-offset"]).toBe("0");
    expect(head.headers["upload-length"]).toBe(String(content.length));
    expect(head.headers["cache-control"]).toBe("no-store");
    expect(head.headers["tus-resumable"]).toBe("1.0.0");
    expect(head.headers["upload-metadata"]).toBe(`filename ${b64("notes.txt")},filetype ${b64("text/plain")}`);

    expect((await patch(alice, location, 0, content.subarray(0, 5), "application/octet-stream")).status).toBe(415);
    const conflict = await patch(alice, location, 3, content.subarray(0, 5));
    expect(conflict.status).toBe(409);
    const first = await patch(alice, location, 0, content.subarray(0, 5));
    expect(first.status).toBe(204);
    expect(first.headers["upload-offset"]).toBe("5");
    expect(first.headers["upload-expires"]).toBeDefined();
    expect((await send("HEAD", location, tus(alice))).headers["upload-offset"]).toBe("5");
    // The same piece again is a conflict: the server has it.
    expect((await patch(alice, location, 0, content.subarray(0, 5))).status).toBe(409);
    // Past the declared length: refused, and nothing of it kept.
    const past = await patch(alice, location, 5, Buffer.concat([content.subarray(5), Buffer.from("extra")]));
    expect(past.status).toBe(413);
    expect((await send("HEAD", location, tus(alice))).headers["upload-offset"]).toBe("5");

    const last = await patch(alice, location, 5, content.subarray(5));
    expect(last.status).toBe(200);
    expect(last.headers["upload-offset"]).toBe(String(content.length));
    expect(last.json).toEqual({ result: "success", msg: "", url: expect.stringMatching(/^\/user_uploads\/\d+\/.+\/notes\.txt$/), uri: last.json.url, filename: "notes.txt" });

    // The same attachment POST /user_uploads makes, downloadable with the same bytes.
    const attachments = (await alice.client.get("/attachments")).body.attachments as Array<{ path_id: string; name: string; size: number }>;
    const attachment = attachments.find((a) => `/user_uploads/${a.path_id}` === last.json.url);
    expect(attachment).toMatchObject({ name: "notes.txt", size: content.length });
    const row = await server.running.services.db.prisma.attachment.findFirstOrThrow({ where: { path_id: attachment!.path_id } });
    expect(row.content_type).toBe("text/plain");
    const got = await send("GET", last.json.url, { authorization: basic(alice) });
    expect(got.status).toBe(200);
    expect(got.text).toBe(content.toString());
    // The upload is over: nothing of it is left to resume, and its pieces are gone.
    expect((await send("HEAD", location, tus(alice))).status).toBe(404);
    expect(await server.storedKeys("tus/")).toEqual([]);
    // As a POST /user_uploads, a message may link it.
    const sent = await alice.client.post("/messages", { type: "private", to: JSON.stringify([alice.id]), content: `[notes](${last.json.url})` });
    expect(sent.body.result).toBe("success");
  });

  test("one request at a time: a piece in flight holds the upload", async () => {
    const location = await create(alice, 10);
    const id = location.split("/").pop()!;
    const prisma = server.running.services.db.prisma;
    await prisma.$executeRawUnsafe("UPDATE tus_upload SET busy_until = now() + interval '1 minute' WHERE id = $1", id);
    const held = await patch(alice, location, 0, Buffer.from("0123456789"));
    expect(held.status).toBe(423);
    expect((await send("DELETE", location, tus(alice))).status).toBe(423);
    await prisma.$executeRawUnsafe("UPDATE tus_upload SET busy_until = NULL WHERE id = $1", id);
    expect((await send("DELETE", location, tus(alice))).status).toBe(204);
  });

  test("another user's upload is unknown to them; termination removes an upload and its pieces", async () => {
    const location = await create(alice, 8);
    expect((await patch(alice, location, 0, Buffer.from("abcd"))).status).toBe(204);
    expect((await server.storedKeys("tus/")).length).toBe(1);
    for (const [method, extra] of [["HEAD", {}], ["DELETE", {}], ["PATCH", { "upload-offset": "4", "content-type": "application/offset+octet-stream" }]] as const) {
      const res = await send(method, location, tus(bob, extra), method === "PATCH" ? Buffer.from("efgh") : undefined);
      expect(res.status).toBe(404);
    }
    expect((await send("HEAD", "/api/v1/tus/not-an-id", tus(alice))).status).toBe(404);
    expect((await send("HEAD", location, tus(alice))).headers["upload-offset"]).toBe("4");
    const gone = await send("DELETE", location, tus(alice));
    expect(gone.status).toBe(204);
    expect((await send("HEAD", location, tus(alice))).status).toBe(404);
    expect(await server.storedKeys("tus/")).toEqual([]);
  });

  test(`at most ${MAX_INCOMPLETE_UPLOADS_PER_USER} unfinished uploads a user; stale ones expire and are swept`, async () => {
    const prisma = server.running.services.db.prisma;
    const locations: string[] = [];
    for (let i = 0; i < MAX_INCOMPLETE_UPLOADS_PER_USER; i++) locations.push(await create(bob, 4));
    const over = await send("POST", "/api/v1/tus", tus(bob, { "upload-length": "4" }));
    expect(over.status).toBe(429);
    expect(over.json).toMatchObject({ result: "error" });
    // Others are not held back by bob's.
    const aliceLocation = await create(alice, 4);
    expect((await patch(bob, locations[0], 0, Buffer.from("ab"))).status).toBe(204);

    // A day without a PATCH: expired (410), and gone at bob's next creation.
    await prisma.$executeRawUnsafe("UPDATE tus_upload SET updated_at = now() - interval '25 hours' WHERE user_id = $1", bob.id);
    expect((await send("HEAD", locations[0], tus(bob))).status).toBe(410);
    expect((await patch(bob, locations[0], 2, Buffer.from("cd"))).status).toBe(410);
    const fresh = await create(bob, 4);
    expect(Number((await prisma.$queryRawUnsafe<Array<{ n: bigint }>>("SELECT count(*) AS n FROM tus_upload WHERE user_id = $1", bob.id))[0].n)).toBe(1);
    expect((await server.storedKeys("tus/")).length).toBe(0);

    // The worker's sweep takes everyone's stale ones.
    await prisma.$executeRawUnsafe("UPDATE tus_upload SET updated_at = now() - interval '25 hours'");
    expect(await sweepStaleTusUploads(prisma, server.running.services.storage)).toBe(2);
    expect((await send("HEAD", fresh, tus(bob))).status).toBe(404);
    expect((await send("HEAD", aliceLocation, tus(alice))).status).toBe(404);
  });

  test("the organization's quota counts as for POST /user_uploads", async () => {
    const prisma = server.running.services.db.prisma;
    const realm = await prisma.realm.findFirstOrThrow({ where: { string_id: "" } });
    await prisma.realm.update({ where: { id: realm.id }, data: { upload_quota_bytes: 1n } });
    try {
      // The actor's realm row is read per request; the quota is already used up.
      const res = await send("POST", "/api/v1/tus", tus(alice, { "upload-length": "100" }));
      expect(res.status).toBe(413);
      expect(res.json).toMatchObject({ result: "error", msg: "Upload would exceed your organization's upload quota." });
    } finally {
      await prisma.realm.update({ where: { id: realm.id }, data: { upload_quota_bytes: null } });
    }
  });

  test("a file without a name is kept as uploaded-file; one with no type takes it from its name", async () => {
    const location = await create(alice, 3, "");
    const done = await patch(alice, location, 0, Buffer.from("abc"));
    expect(done.json).toMatchObject({ result: "success", filename: "uploaded-file" });
    const png = await create(alice, 3, `filename ${b64("picture.png")}`);
    const shown = await patch(alice, png, 0, Buffer.from("xyz"));
    const row = await server.running.services.db.prisma.attachment.findFirstOrThrow({ where: { path_id: shown.json.url.slice("/user_uploads/".length) } });
    expect(row.content_type).toBe("image/png");
  });
});
