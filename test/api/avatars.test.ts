// Uploaded avatars (POST and DELETE /users/me/avatar) and how they are served (/user_avatars), in
// both modes, with real images made by sharp and decoded again from what the server serves.
import sharp from "sharp";
import { fetchPublic, imagePart, largePng, makeAnimatedGif, makeJpeg, makePng, notAnImage, rawRequest, uploadFiles } from "../support/images.ts";
import { STORAGE_SETUPS, startStorageTestServer, type StorageTestServer } from "../support/storage.ts";
import { createTestUser, type TestUser } from "../support/users.ts";
import { verifyAction } from "../support/verify-action.ts";

describe.each(STORAGE_SETUPS)("avatars ($mode, $backend storage)", ({ mode, backend }) => {
  let server: StorageTestServer;
  let admin: TestUser;
  let member: TestUser;
  let other: TestUser;
  let realmId: number;

  beforeAll(async () => {
    // A small limit, so a file past it is quick to make and send.
    server = await startStorageTestServer(mode, backend, { MAX_IMAGE_UPLOAD_SIZE_MIB: "1" });
    admin = await createTestUser(server, "Ada Admin", "admin");
    member = await createTestUser(server, "Mia Member");
    other = await createTestUser(server, "Oscar Other");
    realmId = (await userRow(member.id)).realm_id;
  });
  afterAll(() => server.stop());

  function userRow(id: number) {
    return server.running.services.db.prisma.userProfile.findUniqueOrThrow({ where: { id } });
  }
  const storage = () => server.running.services.storage;
  const keysOf = (userId: number) => [`avatars/${realmId}/${userId}.png`, `avatars/${realmId}/${userId}-medium.png`, `avatars/${realmId}/${userId}.original`];
  const upload = (user: TestUser, data: Buffer, filename = "me.png", type = "image/png") => uploadFiles(user.client, "/users/me/avatar", [imagePart(data, filename, type)]);

  async function served(url: string, size: number): Promise<void> {
    const res = await fetchPublic(server.baseUrl, url);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("image/png");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["cache-control"]).toMatch(/^public, max-age=\d{6,}/);
    expect(await sharp(res.body).metadata()).toMatchObject({ format: "png", width: size, height: size });
  }

  test.each([
    ["a PNG", () => makePng(300, 200), "me.png", "image/png"],
    ["a JPEG", () => makeJpeg(640, 480), "photo.jpg", "image/jpeg"],
    ["an animated GIF", () => makeAnimatedGif(3, 120, 120), "moving.gif", "image/gif"],
  ])("%s becomes the avatar: a new version, everyone's state follows, 100 and 500 pixel PNGs served", async (_kind, make, filename, type) => {
    const image = await make();
    const before = await userRow(member.id);
    let answer: Awaited<ReturnType<typeof upload>> | undefined;
    const events = await verifyAction(other.client, ["realm_user"], async () => {
      answer = await upload(member, image, filename, type);
    });
    const version = before.avatar_version + 1;
    const url = `/user_avatars/${realmId}/${member.id}.png?version=${version}`;
    expect(answer!.status).toBe(200);
    expect(answer!.json).toEqual({ result: "success", msg: "", avatar_url: url });
    expect(events).toEqual([
      {
        id: expect.any(Number),
        type: "realm_user",
        op: "update",
        person: {
          user_id: member.id,
          avatar_source: "U",
          avatar_url: url,
          avatar_url_medium: `/user_avatars/${realmId}/${member.id}-medium.png?version=${version}`,
          avatar_version: version,
        },
      },
    ]);
    expect(await userRow(member.id)).toMatchObject({ avatar_source: "U", avatar_version: version });
    expect((await member.client.get("/users/me")).body.avatar_url).toBe(url);
    await served(url, 100);
    await served(`/user_avatars/${realmId}/${member.id}-medium.png?version=${version}`, 500);
    // The original is kept as it came, but never served.
    const original = await storage().get(keysOf(member.id)[2]);
    expect(original?.size).toBe(image.length);
    original?.body.destroy();
    expect((await fetchPublic(server.baseUrl, `/user_avatars/${realmId}/${member.id}.original`)).status).toBe(404);
  });

  test("the user's own state follows an upload too", async () => {
    const image = await makePng(40, 40);
    await verifyAction(member.client, ["realm_user"], () => upload(member, image));
  });

  test("DELETE goes back to the gravatar and removes the files", async () => {
    expect((await upload(member, await makePng(50, 50))).status).toBe(200);
    const { avatar_version } = await userRow(member.id);
    for (const key of keysOf(member.id)) expect(await storage().stat(key)).not.toBeNull();
    const res = await member.client.delete("/users/me/avatar");
    expect(res.body).toEqual({ result: "success", msg: "", avatar_url: expect.stringMatching(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=\d+$/) });
    expect(await userRow(member.id)).toMatchObject({ avatar_source: "G", avatar_version: avatar_version + 1 });
    for (const key of keysOf(member.id)) expect(await storage().stat(key)).toBeNull();
    const gone = await fetchPublic(server.baseUrl, `/user_avatars/${realmId}/${member.id}.png?version=${avatar_version}`);
    expect(gone.status).toBe(404);
    expect(gone.json).toEqual({ result: "error", msg: "File not found.", code: "BAD_REQUEST" });
  });

  describe("refusals change nothing", () => {
    async function expectRefused(answer: Promise<{ status: number; json: Record<string, any> }>, msg: string, userId = member.id): Promise<void> {
      const before = await userRow(userId);
      const stored = await server.storedKeys("");
      const res = await answer;
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ result: "error", msg });
      expect((await userRow(userId)).avatar_version).toBe(before.avatar_version);
      // Nothing stored, not even for a moment's partial file.
      expect(await server.storedKeys("")).toEqual(stored);
    }

    beforeAll(async () => {
      // No files of an earlier test, so that a refusal that stored anything would show.
      await member.client.delete("/users/me/avatar");
    });
    afterEach(async () => {
      for (const key of keysOf(member.id)) expect(await storage().stat(key)).toBeNull();
    });

    test("no file, as a form or as multipart", async () => {
      await expectRefused(member.client.post("/users/me/avatar").then((r) => ({ status: r.status, json: r.body })), "You must upload exactly one avatar.");
      await expectRefused(uploadFiles(member.client, "/users/me/avatar", [], { note: "no file here" }), "You must upload exactly one avatar.");
    });

    test("two files", async () => {
      const png = await makePng(20, 20);
      await expectRefused(uploadFiles(member.client, "/users/me/avatar", [imagePart(png, "a.png"), imagePart(png, "b.png")]), "You must upload exactly one avatar.");
    });

    test("a file that is not an image, whatever it claims to be", async () => {
      await expectRefused(upload(member, notAnImage(), "fake.png", "image/png"), "Could not decode image; did you upload an image file?");
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
      await expectRefused(upload(member, svg, "vector.svg", "image/svg+xml"), "Could not decode image; did you upload an image file?");
    });

    test("a file past MAX_IMAGE_UPLOAD_SIZE_MIB, whether the body's length announces it or not", async () => {
      const msg = "Uploaded file is larger than the allowed limit of 1 MiB";
      // Past the limit and the multipart overhead: refused on the announced length, unread.
      await expectRefused(upload(member, await largePng(3 * 1024 * 1024)), msg);
      // Just past the limit: refused while it is read.
      const justOver = Buffer.concat([await makePng(10, 10), Buffer.alloc(1024 * 1024)]);
      await expectRefused(upload(member, justOver), msg);
    });

    test("while the organization disables avatar changes, for members (administrators may)", async () => {
      expect((await server.owner.patch("/realm", { avatar_changes_disabled: true })).body.result).toBe("success");
      try {
        await expectRefused(upload(member, await makePng(30, 30)), "Avatar changes are disabled in this organization.");
        expect((await upload(admin, await makePng(30, 30))).json.result).toBe("success");
      } finally {
        await server.owner.patch("/realm", { avatar_changes_disabled: false });
      }
    });

    test("without credentials", async () => {
      const res = await rawRequest(server.baseUrl, "POST", "/api/v1/users/me/avatar", { "content-type": "multipart/form-data; boundary=x" }, Buffer.from("--x--\r\n"));
      expect(res.status).toBe(401);
    });
  });

  describe("serving", () => {
    test.each([
      "/user_avatars/abc/1.png",
      "/user_avatars/0/1.png",
      "/user_avatars/99999999999/1.png",
      "/user_avatars/1/..%2F..%2Fetc%2Fpasswd",
      "/user_avatars/1/%2e%2e",
      "/user_avatars/1/1.original",
      "/user_avatars/1/1.PNG",
      "/user_avatars/1/1-small.png",
      "/user_avatars/1/emoji/images/..%2F1.original",
      "/user_avatars/1/emoji/images/1.png.original",
      "/user_avatars/1/emoji/images/.png",
      "/user_avatars/1/emoji/images/x.svg",
      "/user_avatars/../../package.json",
      "/user_avatars/1/2/3.png",
    ])("%s is a JSON 404", async (target) => {
      const res = await fetchPublic(server.baseUrl, target);
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    });

    test("HEAD answers the headers alone", async () => {
      const { json } = await upload(other, await makePng(64, 64));
      const res = await fetchPublic(server.baseUrl, json.avatar_url, "HEAD");
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("image/png");
      expect(Number(res.headers["content-length"])).toBeGreaterThan(0);
      expect(res.body.length).toBe(0);
    });

    test("the server's icon, which /server_settings names", async () => {
      const settings = await server.anonymous.get("/server_settings");
      expect(settings.body.realm_icon).toBe("/static/images/logo/zulip-icon-128x128.png");
      const res = await fetchPublic(server.baseUrl, settings.body.realm_icon);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("image/png");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(await sharp(res.body).metadata()).toMatchObject({ format: "png", width: 128, height: 128 });
    });
  });
});
