// Uploads, downloads and attachments, in both modes on both storage backends: the upload endpoint
// and its refusals (which leave nothing stored), who may download (a matrix of readers), temporary
// URLs, ranges, and the attachment rows messages link and unlink.
import http from "node:http";
import { createRealm, signTemporaryToken, sweepUnclaimedUploads } from "@chat/core";
import request from "supertest";
import type { ApiClient } from "../support/client.ts";
import { waitForEvent } from "../support/events.ts";
import { registerQueue, sendPrivateMessage, sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { STORAGE_SETUPS, startStorageTestServer, type StorageTestServer } from "../support/storage.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const URI = /^\/user_uploads\/(\d+)\/[0-9a-f]{1,2}\/[A-Za-z0-9_-]{24}\/[^/]+$/;

function upload(client: ApiClient, content: Buffer | string, name: string, contentType?: string) {
  return client.raw("post", "/user_uploads").attach("file", Buffer.from(content), contentType ? { filename: name, contentType } : name);
}

describe.each(STORAGE_SETUPS)("uploads ($mode, $backend storage)", ({ mode, backend }) => {
  let server: StorageTestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let guest: TestUser;
  let outsider: ApiClient;

  const fetchFile = (uri: string) => request(server.baseUrl).get(uri);
  const asUser = (user: TestUser) => (uri: string) => request(server.baseUrl).get(uri).auth(user.email, user.client.credentials!.apiKey);

  async function uploaded(user: TestUser, content: string | Buffer, name = "notes.txt"): Promise<string> {
    const res = await upload(user.client, content, name);
    expect(res.status).toBe(200);
    expect(res.body.result).toBe("success");
    expect(res.body.uri).toMatch(URI);
    return res.body.uri as string;
  }

  beforeAll(async () => {
    server = await startStorageTestServer(mode, backend);
    alice = await createTestUser(server, "Alice Uploader");
    bob = await createTestUser(server, "Bob Recipient");
    carol = await createTestUser(server, "Carol Bystander");
    guest = await createTestUser(server, "Gus Guest", "guest");
    await subscribeTo(alice.client, ["files public"]);
    const { services } = server.running;
    const { owner } = await services.actions.run(0, (tx, events) =>
      createRealm(tx, events, services.ctx, { subdomain: "elsewhere", name: "Elsewhere", owner: { email: "owner@elsewhere.test", fullName: "Else Owner", password: "elsewhere-pass" } }),
    );
    outsider = server.client(owner.email, owner.api_key, "elsewhere.chat.test");
  });
  afterAll(() => server.stop());
  // No test leaves a partial file behind (local storage's .tmp/): one left by a cut-off upload
  // failed every later test in the file that counts stored keys (CI, stop 20).
  afterEach(async () => {
    const partial = async () => (await server.storedKeys("uploads/")).filter((key) => key.startsWith(".tmp/"));
    for (let i = 0; i < 30 && (await partial()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await partial()).toEqual([]);
  });

  test("an upload answers Zulip's uri, announces the attachment, and downloads as sent", async () => {
    const queue = await registerQueue(alice.client, ["attachment"]);
    const content = "hello, files\n".repeat(100);
    const uri = await uploaded(alice, content, "my notes (final).txt");
    expect(uri.endsWith("/my-notes-final.txt")).toBe(true);
    expect(Number(URI.exec(uri)![1])).toBe((await server.running.services.db.prisma.realm.findFirstOrThrow({ where: { string_id: "" } })).id);

    const event = await waitForEvent(alice.client, queue, (e) => e.type === "attachment" && e.op === "add");
    expect(event.attachment).toMatchObject({ name: "my notes (final).txt", path_id: uri.slice("/user_uploads/".length), size: content.length, messages: [] });
    expect(typeof event.attachment.create_time).toBe("number");
    expect(event.upload_space_used).toBeGreaterThanOrEqual(content.length);

    const res = await asUser(alice)(uri);
    expect(res.status).toBe(200);
    expect(res.text).toBe(content);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.headers["content-disposition"]).toMatch(/^attachment; filename="my-notes-final.txt"/);
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-length"]).toBe(String(content.length));

    const listed = await alice.client.get("/attachments");
    expect(listed.body.attachments.map((a: { path_id: string }) => a.path_id)).toContain(uri.slice("/user_uploads/".length));
    expect(listed.body.upload_space_used).toBe(event.upload_space_used);
    expect(await server.storedKeys(`uploads/${uri.slice("/user_uploads/".length)}`)).not.toEqual([]);
  });

  test("a file name in UTF-8, as browsers and python-requests send it, keeps its letters", async () => {
    const res = await alice.client.raw("post", "/user_uploads").attach("file", Buffer.from("cv"), "résumé ünïcode.txt");
    expect(res.body.result).toBe("success");
    expect(decodeURIComponent(res.body.uri).endsWith("/résumé-ünïcode.txt")).toBe(true);
    const listed = await alice.client.get("/attachments");
    expect(listed.body.attachments.map((a: { name: string }) => a.name)).toContain("résumé ünïcode.txt");
  });

  test("images and PDFs show inline, anything else downloads; a declared HTML type never serves as a page", async () => {
    const png = await uploaded(alice, Buffer.from("89504e470d0a1a0a", "hex"), "pic.png");
    const pngRes = await asUser(alice)(png);
    expect(pngRes.headers["content-type"]).toBe("image/png");
    expect(pngRes.headers["content-disposition"]).toMatch(/^inline;/);

    const html = await upload(alice.client, "<script>alert(1)</script>", "page.html", "text/html");
    const htmlRes = await asUser(alice)(html.body.uri);
    expect(htmlRes.headers["content-disposition"]).toMatch(/^attachment;/);
    expect(htmlRes.headers["content-security-policy"]).toContain("sandbox");

    const unknown = await upload(alice.client, "x", "data", "application/x-made-up; charset=utf-8");
    expect((await asUser(alice)(unknown.body.uri)).headers["content-type"]).toMatch(/^application\/x-made-up/);
  });

  test("the type comes from the name the file is served under, not the name as sent", async () => {
    // Sent as "x.html" and a zero-width space, declared image/png: the served name is x.html.
    const sent = await upload(alice.client, "<script>alert(1)</script>", "x.html\u200b", "image/png");
    expect(sent.body.result).toBe("success");
    expect(sent.body.uri.endsWith("/x.html")).toBe(true);
    const res = await asUser(alice)(sent.body.uri);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.headers["content-disposition"]).toMatch(/^attachment; filename="x.html"/);
    const row = await server.running.services.db.prisma.attachment.findFirstOrThrow({ where: { path_id: sent.body.uri.slice("/user_uploads/".length) } });
    expect(row.content_type).toBe("text/html");
  });

  test("a file stored before that, under a name whose type differs, is served by its name", async () => {
    const sent = await upload(alice.client, "<b>hi</b>", "old.html", "text/html");
    const pathId = sent.body.uri.slice("/user_uploads/".length);
    await server.running.services.db.prisma.attachment.updateMany({ where: { path_id: pathId }, data: { content_type: "image/png" } });
    const res = await asUser(alice)(sent.body.uri);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.headers["content-disposition"]).toMatch(/^attachment;/);
  });

  test("credentials: HTTP Basic or Zulip's api_key parameter; none is 401, a wrong key 401", async () => {
    const uri = await uploaded(alice, "secret");
    expect((await fetchFile(`${uri}?api_key=${alice.client.credentials!.apiKey}`)).text).toBe("secret");
    const none = await fetchFile(uri);
    expect(none.status).toBe(401);
    expect(none.body.result).toBe("error");
    expect((await fetchFile(`${uri}?api_key=wrongkeywrongkeywrongkeywrongkey`)).status).toBe(401);
    expect((await request(server.baseUrl).get(uri).auth(alice.email, "nope")).status).toBe(401);
  });

  test("who may download: uploader, recipients, readers of public history; not others, guests or other realms", async () => {
    const privateUri = await uploaded(alice, "for bob only");
    await sendPrivateMessage(alice.client, [bob.id], `see [file](${privateUri})`);
    const streamUri = await uploaded(alice, "for the stream");
    await sendStreamMessage(alice.client, "files public", "shared", `[file](${streamUri})`);
    const unsharedUri = await uploaded(alice, "nobody else");

    const expectations: Array<[string, (uri: string) => request.Test, string, number]> = [
      ["uploader", asUser(alice), privateUri, 200],
      ["PM recipient", asUser(bob), privateUri, 200],
      ["non-recipient", asUser(carol), privateUri, 403],
      ["guest non-recipient", asUser(guest), privateUri, 403],
      ["other realm", (uri) => request(server.baseUrl).get(uri).auth(outsider.credentials!.email, outsider.credentials!.apiKey).set("Host", "elsewhere.chat.test"), privateUri, 404],
      ["no credentials", fetchFile, privateUri, 401],
      ["member, public stream history", asUser(carol), streamUri, 200],
      ["guest not subscribed to the public stream", asUser(guest), streamUri, 403],
      ["member, unshared upload", asUser(bob), unsharedUri, 403],
      ["uploader, unshared upload", asUser(alice), unsharedUri, 200],
    ];
    for (const [who, get, uri, status] of expectations) {
      const res = await get(uri);
      expect({ who, status: res.status }).toEqual({ who, status });
      if (status !== 200) expect(res.body.result).toBe("error");
    }
    // A guest subscribed to the stream reads its history.
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "files public" }], principals: [guest.email] });
    expect((await asUser(guest)(streamUri)).status).toBe(200);
  });

  test("a path that names no upload is 404, traversal included", async () => {
    for (const path of ["/user_uploads/1/ab/notarealpath/x.txt", "/user_uploads/1/../../etc/passwd", "/user_uploads/1/%2e%2e/%2e%2e/etc/passwd", "/user_uploads/x/ab/cd/e"]) {
      const res = await asUser(alice)(path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });

  test("ranges: one range is 206 with its bytes, past the end 416", async () => {
    const uri = await uploaded(alice, "0123456789abcdef");
    const part = await asUser(alice)(uri).set("Range", "bytes=2-5");
    expect(part.status).toBe(206);
    expect(part.text).toBe("2345");
    expect(part.headers["content-range"]).toBe("bytes 2-5/16");
    const suffix = await asUser(alice)(uri).set("Range", "bytes=-3");
    expect(suffix.text).toBe("def");
    const past = await asUser(alice)(uri).set("Range", "bytes=100-200");
    expect(past.status).toBe(416);
    expect(past.headers["content-range"]).toBe("bytes */16");
  });

  test("the API's temporary URL works without credentials, for its file only, until it expires", async () => {
    const uri = await uploaded(alice, "temporary");
    const asked = await alice.client.get(uri.replace(/^\/user_uploads/, "/user_uploads"));
    expect(asked.body.result).toBe("success");
    expect(asked.body.url).toMatch(/^\/user_uploads\/temporary\//);
    const res = await fetchFile(asked.body.url);
    expect(res.status).toBe(200);
    expect(res.text).toBe("temporary");
    // Someone who may not read the file gets no URL for it.
    expect((await carol.client.get(uri)).status).toBe(403);

    const tampered = asked.body.url.replace(/\.([A-Za-z0-9_-]+)\//, ".AAAA$1/");
    expect((await fetchFile(tampered)).status).toBe(404);
    const secret = (await server.running.services.db.prisma.serverSecret.findUniqueOrThrow({ where: { name: "temporary-file-urls" } })).value;
    const expired = signTemporaryToken(secret, uri.slice("/user_uploads/".length), Math.floor(Date.now() / 1000) - 1);
    expect((await fetchFile(`/user_uploads/temporary/${expired}/x`)).status).toBe(404);
  });

  test("refusals: no file, two files, too large, over quota; each leaves nothing stored", async () => {
    const before = await server.storedKeys("uploads/");
    const countRows = () => server.running.services.db.prisma.attachment.count();
    const rows = await countRows();

    const none = await alice.client.raw("post", "/user_uploads").field("x", "y");
    expect(none.body).toMatchObject({ result: "error", msg: "You must specify a file to upload" });
    const two = await alice.client.raw("post", "/user_uploads").attach("a", Buffer.from("one"), "a.txt").attach("b", Buffer.from("two"), "b.txt");
    expect(two.body).toMatchObject({ result: "error", msg: "You may only upload one file at a time" });

    const uploads = server.running.services.config.uploads;
    const saved = uploads.maxFileBytes;
    uploads.maxFileBytes = 1024 * 1024;
    try {
      const big = await upload(alice.client, Buffer.alloc(1024 * 1024 + 1, 7), "big.bin");
      expect(big.status).toBe(400);
      expect(big.body).toMatchObject({ result: "error", msg: "Uploaded file is larger than the allowed limit of 1 MiB", code: "BAD_REQUEST" });
      const exact = await upload(alice.client, Buffer.alloc(1024 * 1024, 7), "exact.bin");
      expect(exact.body.result).toBe("success");
      await alice.client.delete(`/attachments/${(await server.running.services.db.prisma.attachment.findFirstOrThrow({ where: { path_id: exact.body.uri.slice(14) } })).id}`);
    } finally {
      uploads.maxFileBytes = saved;
    }

    const prisma = server.running.services.db.prisma;
    const realm = await prisma.realm.findFirstOrThrow({ where: { string_id: "" } });
    const used = Number((await prisma.attachment.aggregate({ _sum: { size: true }, where: { realm_id: realm.id } }))._sum.size ?? 0);
    await prisma.realm.update({ where: { id: realm.id }, data: { upload_quota_bytes: BigInt(used + 10) } });
    try {
      const over = await upload(alice.client, "x".repeat(11), "over.txt");
      expect(over.body).toMatchObject({ result: "error", msg: "Upload would exceed your organization's upload quota." });
      const fits = await upload(alice.client, "x".repeat(10), "fits.txt");
      expect(fits.body.result).toBe("success");
      const full = await upload(alice.client, "y", "full.txt");
      expect(full.body.msg).toBe("Upload would exceed your organization's upload quota.");
      await prisma.attachment.deleteMany({ where: { path_id: fits.body.uri.slice(14) } });
      await server.running.services.storage.delete([`uploads/${fits.body.uri.slice(14)}`]);
    } finally {
      await prisma.realm.update({ where: { id: realm.id }, data: { upload_quota_bytes: null } });
    }

    expect(await countRows()).toBe(rows);
    expect(await server.storedKeys("uploads/")).toEqual(before);
  });

  test("an upload cut off mid-file leaves nothing behind", async () => {
    const before = await server.storedKeys("uploads/");
    const rows = await server.running.services.db.prisma.attachment.count();
    const boundary = "----cutoff";
    const { port } = new URL(server.baseUrl);
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/api/v1/user_uploads",
        headers: {
          "Content-Type": `multipart/form-data; boundary=${boundary}`,
          "Content-Length": String(10 * 1024 * 1024),
          Authorization: `Basic ${Buffer.from(`${alice.email}:${alice.client.credentials!.apiKey}`).toString("base64")}`,
        },
      });
      req.on("error", () => resolve());
      req.on("response", () => resolve());
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
      req.write(Buffer.alloc(3 * 1024 * 1024, 1), () => setTimeout(() => req.destroy(), 200));
    });
    // The server notices the closed connection and undoes the partial file.
    const deadline = Date.now() + 5000;
    let keys = await server.storedKeys("uploads/");
    while (keys.length !== before.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      keys = await server.storedKeys("uploads/");
    }
    expect(keys).toEqual(before);
    expect(await server.running.services.db.prisma.attachment.count()).toBe(rows);
  });

  test("messages link uploads on send and edit, unlink on edit and delete, with update events", async () => {
    const queue = await registerQueue(alice.client, ["attachment"]);
    const uri = await uploaded(alice, "linked");
    const pathId = uri.slice("/user_uploads/".length);
    const id = await sendStreamMessage(alice.client, "files public", "links", `look: [linked](${uri})`);
    const claimed = await waitForEvent(alice.client, queue, (e) => e.type === "attachment" && e.op === "update" && e.attachment.path_id === pathId && e.attachment.messages.length === 1);
    expect(claimed.attachment.messages[0].id).toBe(id);
    expect(typeof claimed.attachment.messages[0].name).toBe("number");

    const narrow = [{ operator: "has", operand: "attachment" }, { operator: "stream", operand: "files public" }];
    const found = await alice.client.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow });
    expect(found.body.messages.map((m: { id: number }) => m.id)).toContain(id);

    const edited = await alice.client.patch(`/messages/${id}`, { content: "no file any more" });
    expect(edited.body.result).toBe("success");
    await waitForEvent(alice.client, queue, (e) => e.type === "attachment" && e.op === "update" && e.attachment.path_id === pathId && e.attachment.messages.length === 0);
    const after = await alice.client.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow });
    expect(after.body.messages.map((m: { id: number }) => m.id)).not.toContain(id);

    await alice.client.patch(`/messages/${id}`, { content: `back: ${server.baseUrl}${uri}` });
    await waitForEvent(alice.client, queue, (e) => e.type === "attachment" && e.op === "update" && e.attachment.path_id === pathId && e.attachment.messages.length === 1);

    // Members may not delete messages by default; an administrator may.
    expect((await server.owner.delete(`/messages/${id}`)).body.result).toBe("success");
    await waitForEvent(alice.client, queue, (e) => e.type === "attachment" && e.op === "update" && e.attachment.path_id === pathId && e.attachment.messages.length === 0);
    const listed = await alice.client.get("/attachments");
    expect(listed.body.attachments.find((a: { path_id: string }) => a.path_id === pathId).messages).toEqual([]);
  });

  test("a link to someone else's private upload does not attach it", async () => {
    const uri = await uploaded(alice, "alice's");
    const id = await sendStreamMessage(carol.client, "files public", "sneaky", `[mine now](${uri})`);
    const message = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id } });
    expect(message.has_attachment).toBe(false);
    expect((await asUser(bob)(uri)).status).toBe(403);
  });

  test("has:image finds a message linking an uploaded image", async () => {
    const uri = await uploaded(alice, Buffer.from("89504e470d0a1a0a", "hex"), "shot.png");
    const id = await sendStreamMessage(alice.client, "files public", "images", `[shot.png](${uri})`);
    const res = await alice.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "has", operand: "image" }] });
    expect(res.body.messages.map((m: { id: number }) => m.id)).toContain(id);
  });

  test("DELETE /attachments/{id}: the uploader's only; the file and its bytes go, with a remove event", async () => {
    const queue = await registerQueue(alice.client, ["attachment"]);
    const uri = await uploaded(alice, "to delete");
    const pathId = uri.slice("/user_uploads/".length);
    const row = await server.running.services.db.prisma.attachment.findUniqueOrThrow({ where: { path_id: pathId } });
    const refused = await bob.client.delete(`/attachments/${row.id}`);
    expect(refused.body).toMatchObject({ result: "error", msg: "Invalid attachment" });
    expect((await bob.client.delete("/attachments/99999999")).body.msg).toBe("Invalid attachment");

    expect((await alice.client.delete(`/attachments/${row.id}`)).body.result).toBe("success");
    const removed = await waitForEvent(alice.client, queue, (e) => e.type === "attachment" && e.op === "remove");
    expect(removed.attachment).toEqual({ id: row.id });
    expect(typeof removed.upload_space_used).toBe("number");
    expect((await asUser(alice)(uri)).status).toBe(404);
    expect(await server.storedKeys(`uploads/${pathId}`)).toEqual([]);
  });

  test("DELETE /attachments/{id} succeeds once its row is gone even if storage fails to delete the bytes", async () => {
    const uri = await uploaded(alice, "storage will fail");
    const row = await server.running.services.db.prisma.attachment.findUniqueOrThrow({ where: { path_id: uri.slice("/user_uploads/".length) } });
    const storage = server.running.services.storage;
    const original = storage.delete;
    storage.delete = async () => {
      throw new Error("storage unavailable");
    };
    try {
      const res = await alice.client.delete(`/attachments/${row.id}`);
      expect(res.status).toBe(200);
      expect(res.body.result).toBe("success");
    } finally {
      storage.delete = original;
    }
    expect(await server.running.services.db.prisma.attachment.findUnique({ where: { id: row.id } })).toBeNull();
  });

  test("the worker's sweep deletes old unreferenced uploads, rows and bytes, and keeps linked ones", async () => {
    const prisma = server.running.services.db.prisma;
    const orphan = (await uploaded(alice, "orphan")).slice("/user_uploads/".length);
    const linked = (await uploaded(alice, "linked")).slice("/user_uploads/".length);
    const fresh = (await uploaded(alice, "fresh")).slice("/user_uploads/".length);
    await sendPrivateMessage(alice.client, [bob.id], `/user_uploads/${linked}`);
    const old = new Date(Date.now() - 30 * 24 * 3600_000);
    await prisma.attachment.updateMany({ where: { path_id: { in: [orphan, linked] } }, data: { create_time: old } });

    const deleted = await sweepUnclaimedUploads(prisma, server.running.services.storage, 21 * 24);
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect(await prisma.attachment.findUnique({ where: { path_id: orphan } })).toBeNull();
    expect(await server.storedKeys(`uploads/${orphan}`)).toEqual([]);
    expect(await prisma.attachment.findUnique({ where: { path_id: linked } })).not.toBeNull();
    expect(await server.storedKeys(`uploads/${linked}`)).not.toEqual([]);
    expect(await prisma.attachment.findUnique({ where: { path_id: fresh } })).not.toBeNull();
  });
});
