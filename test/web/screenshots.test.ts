// The web client's main screens, on an organization with a few people talking, as screenshots
// (test/artifacts/screenshots; `npm run web:screenshots` also copies them to docs/screenshots for
// the README), each checked with axe and for console errors (CSP violations among them) on the way.
// The login page's picture comes from test/web/login.test.ts, which that script runs too.
import sharp from "sharp";
import { checkAccessibility, newPerson, screenshot, useBrowser, waitForMessages, type Person } from "../support/browser.ts";
import { imagePart, uploadFiles } from "../support/images.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

/** One mode is enough for pictures: the first of those this run covers. */
const mode = MODES[0];

const LIVE = { timeout: 30_000 };

/** Gravatar pictures, which the test machine cannot reach (the client falls back to initials). */
const offline = (problem: { text: string }) => /secure\.gravatar\.com/.test(problem.text);

/** A small bar chart, the kind of picture people paste into a chat. */
function chartPng(): Promise<Buffer> {
  const bars = [42, 55, 48, 70, 66, 88, 94];
  const days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
  const rects = bars
    .map((h, i) => `<rect x="${40 + i * 60}" y="${200 - h * 1.8}" width="40" height="${h * 1.8}" rx="4" fill="#4f7fd8"/><text x="${60 + i * 60}" y="222" font-size="14" text-anchor="middle" fill="#555" font-family="sans-serif">${days[i]}</text>`)
    .join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="240"><rect width="480" height="240" fill="#ffffff"/><text x="20" y="26" font-size="16" font-family="sans-serif" fill="#222">Requests per second after v2.4 (thousands)</text>${rects}<line x1="30" y1="201" x2="460" y2="201" stroke="#999"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

describe(`the web client's main screens (${mode})`, () => {
  const handle = useBrowser();
  let server: TestServer;
  let person: Person;
  let engineering: number;
  let ada: TestUser;

  beforeAll(async () => {
    server = await startTestServer(mode);
    await server.owner.patch("/realm", { name: "Acme Rockets" });
    await server.owner.patch("/settings", { full_name: "Olivia Park" });
    const people: TestUser[] = [];
    for (const name of ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Katherine Johnson", "Margaret Hamilton"]) people.push(await createTestUser(server, name));
    const [, grace, alan, katherine, margaret] = people;
    ada = people[0];
    const everyone = [OWNER_EMAIL, ...people.map((p) => p.email)];
    await subscribeTo(server.owner, ["engineering", "design", "random", "announcements"], { principals: everyone });
    const streams = (await server.owner.get("/streams")).body.streams as Array<{ name: string; stream_id: number }>;
    const idOf = (name: string) => streams.find((s) => s.name === name)!.stream_id;
    engineering = idOf("engineering");
    await server.owner.patch(`/streams/${engineering}`, { description: "Building and shipping the product" });
    await server.owner.patch(`/streams/${idOf("design")}`, { description: "Screens, flows and **feedback**" });
    await server.owner.patch(`/streams/${idOf("random")}`, { description: "Lunch, links and everything else" });
    await server.owner.patch(`/streams/${idOf("announcements")}`, { description: "News from the leadership team" });
    // A few channels nobody has joined yet, for the channel browser.
    await server.owner.post("/users/me/subscriptions", {
      subscriptions: JSON.stringify([
        { name: "marketing", description: "Campaigns, launches and the website" },
        { name: "support", description: "Questions from customers, answered together" },
      ]),
      principals: JSON.stringify([margaret.email]),
    });

    await sendStreamMessage(server.owner, "announcements", "all hands", "The **all hands** moves to Thursday at 16:00. Bring questions!");
    await sendStreamMessage(ada.client, "engineering", "deploys", "Deploying **v2.4** to staging now.");
    await sendStreamMessage(grace.client, "engineering", "deploys", "Looks good here. The migration ran in `1.2 s`:\n```sql\nALTER TABLE message ADD COLUMN edited boolean NOT NULL DEFAULT false;\nCREATE INDEX message_edited ON message (edited);\n```");
    await sendStreamMessage(alan.client, "engineering", "deploys", "@**Ada Lovelace** can we roll it out to production after lunch?");
    const id = await sendStreamMessage(ada.client, "engineering", "deploys", "Sure, I'll watch the dashboards :eyes:");
    await grace.client.post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" });
    await alan.client.post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" });
    await katherine.client.post(`/messages/${id}/reactions`, { emoji_name: "rocket" });
    const upload = await uploadFiles(katherine.client, "/user_uploads", [imagePart(await chartPng(), "throughput.png")]);
    expect(upload.json.result).toBe("success");
    const uri = upload.json.uri as string;
    await sendStreamMessage(katherine.client, "engineering", "deploys", `Throughput since the deploy, for the record:\n[throughput.png](${uri})`);
    await sendStreamMessage(grace.client, "engineering", "flaky tests", "The upload test timed out twice today. I'll look into it :detective:");
    await sendStreamMessage(grace.client, "design", "new sidebar", "Here is the new sidebar, with unread counts:\n- channels first\n- then *direct messages*\n- people on the right");
    await sendStreamMessage(margaret.client, "design", "new sidebar", "> then *direct messages*\n\nLove it. Could the counts be a little bolder?");
    await sendStreamMessage(alan.client, "random", "lunch", "Anyone for noodles at 12:30? :ramen:");
    await server.owner.post("/messages", { type: "private", to: JSON.stringify([ada.id]), content: "Thanks for handling the release!" });
    const ownerId = (await server.owner.get("/users/me")).body.user_id as number;
    await ada.client.post("/messages", { type: "private", to: JSON.stringify([ownerId]), content: "Happy to. The checklist in the wiki made it easy :smile:" });
    await server.owner.post("/messages", { type: "private", to: JSON.stringify([ada.id]), content: "Let's add **rollback steps** to it next week." });
    await server.owner.post("/users/me/status", { status_text: "Planning Q3", away: false });
    await grace.client.post("/users/me/status", { status_text: "In a meeting", away: false });

    // Signed in without the form, which test/web/login.test.ts covers.
    person = await newPerson(handle.browser, server, { email: OWNER_EMAIL, password: OWNER_PASSWORD }, { login: "http" });
  }, 120_000);

  afterAll(async () => {
    await person?.close();
    await server?.stop();
  });

  async function open(hash: string): Promise<void> {
    await person.page.goto(`/${hash}`);
  }

  it("the combined feed", async () => {
    await open("");
    await waitForMessages(person.page);
    await person.page.getByText("Let's add rollback steps").first().waitFor(LIVE);
    // The chart is shown inline (the server's message_inline_image): wait for the picture itself.
    const chart = person.page.locator(".message_inline_image img").first();
    await chart.waitFor({ ...LIVE, state: "attached" });
    await person.page.waitForFunction((img) => { const picture = img as unknown as { complete: boolean; naturalWidth: number }; return picture.complete && picture.naturalWidth > 0; }, await chart.elementHandle(), LIVE);
    await screenshot(person.page, "feed", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone(offline);
  });

  it("a topic of a channel, composing a reply with the typeahead open", async () => {
    const page = person.page;
    await open(`#narrow/channel/${engineering}-engineering/topic/deploys`);
    await waitForMessages(page);
    await page.getByText("watch the dashboards").first().waitFor(LIVE);
    await page.locator(".compose-reply").click();
    const textarea = page.getByRole("textbox", { name: "Message text" });
    await textarea.pressSequentially("Great work everyone! @gra", { delay: 20 });
    await page.locator(".typeahead").waitFor(LIVE);
    await screenshot(page, "channel-topic", { readme: true });
    await checkAccessibility(page);
    await textarea.fill("");
    await page.keyboard.press("Escape");
    person.problems.expectNone(offline);
  });

  it("a direct message conversation", async () => {
    const page = person.page;
    await open("");
    await page.locator('.sidebar-left [aria-label="Direct messages"] a', { hasText: "Ada Lovelace" }).click();
    await page.getByText("rollback steps").first().waitFor(LIVE);
    await page.getByText("checklist in the wiki").first().waitFor(LIVE);
    await screenshot(page, "direct-messages", { readme: true });
    await checkAccessibility(page);
    person.problems.expectNone(offline);
  });

  it("search results", async () => {
    const page = person.page;
    const search = page.getByRole("combobox", { name: "Search messages" }).or(page.getByLabel("Search messages")).first();
    await search.click();
    await search.fill("deploy");
    await search.press("Enter");
    await page.locator(".msg-content", { hasText: /deploy/i }).first().waitFor(LIVE);
    await page.locator("body").click({ position: { x: 640, y: 400 } }).catch(() => undefined);
    await screenshot(page, "search", { readme: true });
    await checkAccessibility(page);
    person.problems.expectNone(offline);
  });

  it("personal settings", async () => {
    await open("#settings/profile");
    await person.page.getByRole("dialog").or(person.page.locator('[data-testid="settings"]')).first().waitFor();
    await screenshot(person.page, "settings", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone(offline);
  });

  it("organization administration", async () => {
    await open("#organization/users");
    await person.page.getByText("Grace Hopper").first().waitFor();
    await person.page.getByRole("row").filter({ hasText: "Margaret Hamilton" }).waitFor(LIVE);
    await screenshot(person.page, "organization-users", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone(offline);
  });

  it("the channel browser", async () => {
    await open("#channels/all");
    await person.page.getByRole("button", { name: "Subscribe to marketing" }).waitFor(LIVE);
    await screenshot(person.page, "channel-browser", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone(offline);
  });
});
