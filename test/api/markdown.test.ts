// Message Markdown over the API: POST /messages/render and the stored rendered_content of a sent
// message give the same HTML, in Zulip's conventions, with names resolved in the sender's realm.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

const link = (url: string, text = url) => `<a href="${url}" target="_blank" rel="noopener noreferrer" title="${url}">${text}</a>`;

describe.each(MODES)("message Markdown (%s)", (mode) => {
  let server: TestServer;
  let alice: TestUser;
  let groupId: number;
  let streamId: number;
  let realmId: number;

  async function render(content: string): Promise<string> {
    const res = await server.owner.post("/messages/render", { content });
    expect(res.body.result).toBe("success");
    return res.body.rendered;
  }

  async function stored(content: string): Promise<string> {
    const sent = await server.owner.post("/messages", { type: "stream", to: "general", topic: "markdown", content });
    expect(sent.body.result).toBe("success");
    return (await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.id } })).rendered_content!;
  }

  beforeAll(async () => {
    server = await startTestServer(mode);
    alice = await createTestUser(server, "Alice Md");
    const group = await server.owner.post("/user_groups/create", { name: "md-team", description: "Team", members: [alice.id] });
    expect(group.body.result).toBe("success");
    const { prisma } = server.running.services.db;
    groupId = (await prisma.userGroup.findFirstOrThrow({ where: { name: "md-team" } })).id;
    await server.owner.post("/users/me/subscriptions", { subscriptions: [{ name: "design team" }] });
    const stream = await prisma.stream.findFirstOrThrow({ where: { name: "design team" } });
    streamId = stream.id;
    realmId = stream.realm_id;
    await prisma.realmEmoji.create({ data: { realm_id: realmId, name: "party_parrot", file_name: "party_parrot.png" } });
  });
  afterAll(() => server.stop());

  test("each syntax element, via /messages/render and via the stored message", async () => {
    const cases: Array<[string, string]> = [
      ["**bold** *em* ~~del~~ `code`", "<p><strong>bold</strong> <em>em</em> <del>del</del> <code>code</code></p>"],
      ["```js\nlet x = '<a>';\n```", '<div class="codehilite" data-code-language="JavaScript"><pre><span></span><code>let x = &#39;&lt;a&gt;&#39;;\n</code></pre></div>'],
      ["```\nplain\n```", '<div class="codehilite"><pre><span></span><code>plain\n</code></pre></div>'],
      ["> quoted\n\n- one\n- two", "<blockquote>\n<p>quoted</p>\n</blockquote>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>"],
      ["[Zulip](https://zulip.com) https://example.com/x", `<p>${link("https://zulip.com", "Zulip")} ${link("https://example.com/x")}</p>`],
      [`@**Alice Md** @**Alice Md|${0}**`, ""], // replaced below with the real id
      ["@_**Alice Md**", ""],
      ["@**all**", '<p><span class="user-mention" data-user-id="*">@all</span></p>'],
      ["@*md-team*", ""],
      ["#**design team** #**Design Team>some topic**", ""],
      [":grinning: :party_parrot: :not_an_emoji:", ""],
      ["/me tests", "<p>/me tests</p>"],
      [
        ":thumbs_up: :like: :working_on_it:",
        '<p><span aria-label="thumbs up" class="emoji emoji-1f44d" role="img" title="thumbs up">:thumbs_up:</span> ' +
          '<span aria-label="like" class="emoji emoji-1f44d" role="img" title="like">:like:</span> ' +
          '<span aria-label="working on it" class="emoji emoji-1f6e0" role="img" title="working on it">:working_on_it:</span></p>',
      ],
    ];
    cases[5] = [`@**Alice Md** @**Alice Md|${alice.id}**`, `<p><span class="user-mention" data-user-id="${alice.id}">@Alice Md</span> <span class="user-mention" data-user-id="${alice.id}">@Alice Md</span></p>`];
    cases[6][1] = `<p><span class="user-mention silent" data-user-id="${alice.id}">Alice Md</span></p>`;
    cases[8][1] = `<p><span class="user-group-mention" data-user-group-id="${groupId}">@md-team</span></p>`;
    cases[9][1] =
      `<p><a class="stream" data-stream-id="${streamId}" href="/#narrow/stream/${streamId}-design-team">#design team</a> ` +
      `<a class="stream-topic" data-stream-id="${streamId}" href="/#narrow/stream/${streamId}-design-team/topic/some.20topic">#design team &gt; some topic</a></p>`;
    cases[10][1] =
      '<p><span aria-label="grinning" class="emoji emoji-1f600" role="img" title="grinning">:grinning:</span> ' +
      `<img alt=":party_parrot:" class="emoji" src="/user_avatars/${realmId}/emoji/images/party_parrot.png" title="party parrot"> :not_an_emoji:</p>`;
    for (const [content, expected] of cases) {
      expect(await render(content)).toBe(expected);
      expect(await stored(content)).toBe(expected);
    }
  });

  test("unknown users, groups and streams stay text", async () => {
    expect(await render("@**Nobody Here** @*no-group* #**no-stream**")).toBe("<p>@<strong>Nobody Here</strong> @<em>no-group</em> #<strong>no-stream</strong></p>");
  });

  test("a stored message records is_me_message and has_link", async () => {
    const sent = await server.owner.post("/messages", { type: "stream", to: "general", topic: "markdown", content: "/me reads https://example.com/a.png" });
    const message = await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: sent.body.id } });
    expect(message).toMatchObject({ is_me_message: true, has_link: true, has_image: true });
    const plain = await server.owner.post("/messages", { type: "stream", to: "general", topic: "markdown", content: "#**design team** :grinning:" });
    expect(await server.running.services.db.prisma.message.findUniqueOrThrow({ where: { id: plain.body.id } })).toMatchObject({ has_link: false, has_image: false });
  });

  test("content is required", async () => {
    const res = await server.owner.post("/messages/render", {});
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ result: "error", msg: "Missing 'content' argument" });
  });

  test("any user of the realm may render", async () => {
    const res = await alice.client.post("/messages/render", { content: "@**Alice Md**" });
    expect(res.body).toEqual({ result: "success", msg: "", rendered: `<p><span class="user-mention" data-user-id="${alice.id}">@Alice Md</span></p>` });
  });

  test("a link to an uploaded image gets Zulip's inline preview; other links do not", async () => {
    const upload = await alice.client.raw("post", "/user_uploads").attach("file", Buffer.from("not really a png"), "shot.png");
    expect(upload.body.result).toBe("success");
    const url: string = upload.body.uri;
    const preview = (href: string, title?: string) =>
      `<div class="message_inline_image"><a href="${href}"${title === undefined ? "" : ` title="${title}"`}><img src="${href}" alt="${title ?? "shot.png"}"></a></div>`;
    const content = `[shot.png](${url})`;
    const expected = `<p>${link(url, "shot.png")}</p>\n${preview(url, "shot.png")}`;
    expect(await render(content)).toBe(expected);
    expect(await stored(content)).toBe(expected);
    // An absolute URL on the realm's own host counts as the same upload.
    const absolute = `http://${server.running.services.ctx.externalHost}${url}`;
    expect(await render(`see ${absolute}`)).toBe(`<p>see ${link(absolute)}</p>\n${preview(absolute)}`);
    for (const other of [`[notes.txt](${url.replace(/[^/]+$/, "notes.txt")})`, "[x](https://example.com/x.png)", `[x](https://example.com${url})`, `> [q](${url})`]) {
      expect(await render(other)).not.toContain("<img");
    }
    // Past Zulip's 24 distinct links, no previews at all.
    const many = Array.from({ length: 25 }, (_, i) => `[${i}](${url.replace(/[^/]+$/, `${i}.png`)})`).join("\n");
    expect(await stored(many)).not.toContain("<img");
  });

  describe("hostile input", () => {
    test.each([
      "[click](javascript:alert(document.cookie))",
      "[click](JAVASCRIPT:alert(1))",
      "[click](&#106;avascript:alert(1))",
      "[click](javascript&colon;alert(1))",
      "[click](java\nscript:alert(1))",
      "[click](data:text/html,<script>alert(1)</script>)",
      "<javascript:alert(1)>",
      "![img](javascript:alert(1))",
      "![img](https://evil.example/x.png)",
      '<img src=x onerror="alert(1)">',
      "<script>alert(1)</script>",
      '<a href="javascript:alert(1)">x</a>',
      "<svg/onload=alert(1)>",
      "```\n</code></pre><script>alert(1)</script>\n```",
      "`</code><script>alert(1)</script>`",
      '```"><script>alert(1)</script>\nx\n```',
      "[a](https://example.com/\"onmouseover=\"alert(1))",
      "[**[nested](javascript:alert(1))**](https://example.com)",
    ])("%j renders no script, handler or unsafe URL", async (content) => {
      const out = await render(content);
      expect(out).not.toMatch(/<(script|img|svg|iframe)\b/i);
      expect(out).not.toMatch(/<[^>]*\son\w+=/i);
      expect(out).not.toMatch(/<a\b[^>]*\shref="(?!https?:|mailto:|\/)/i);
      expect(await stored(content)).toBe(out);
    });

    test("markup in a user's, a group's and a stream's name is escaped", async () => {
      // The API refuses such names; other paths (imports, the database) may not, so the renderer escapes.
      const evil = await createTestUser(server, "Evil Name");
      const { prisma } = server.running.services.db;
      await prisma.userProfile.update({ where: { id: evil.id }, data: { full_name: 'Evil "><img src=x onerror=alert(1)>' } });
      const stream = await prisma.stream.create({ data: { realm_id: realmId, name: '"><svg onload=alert(1)>', email_token: "evil-token" } });
      const out = await render(`@**Evil "><img src=x onerror=alert(1)>** #**"><svg onload=alert(1)>** #**design team>"><b onclick=x>**`);
      expect(out).toBe(
        `<p><span class="user-mention" data-user-id="${evil.id}">@Evil "&gt;&lt;img src=x onerror=alert(1)&gt;</span> ` +
          `<a class="stream" data-stream-id="${stream.id}" href="/#narrow/stream/${stream.id}-.22.3E.3Csvg-onload.3Dalert.281.29.3E">#"&gt;&lt;svg onload=alert(1)&gt;</a> ` +
          `<a class="stream-topic" data-stream-id="${streamId}" href="/#narrow/stream/${streamId}-design-team/topic/.22.3E.3Cb.20onclick.3Dx.3E">#design team &gt; "&gt;&lt;b onclick=x&gt;</a></p>`,
      );
    });

    test("unicode tricks: a zero-width space or full-width colon in a scheme makes no javascript: link", async () => {
      for (const content of ["[x](\u200bjavascript:alert(1))", "[x](javascript\uff1aalert(1))", "[x](\u202ejavascript:alert(1))"]) {
        expect(await render(content)).not.toMatch(/href="[^"/]*:/);
      }
    });
  });
});
