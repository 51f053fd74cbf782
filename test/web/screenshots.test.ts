// The web client's main screens, on an organization with a few people talking, as screenshots
// (test/artifacts/screenshots; `npm run web:screenshots` also copies them to docs/screenshots for
// the README), each checked with axe and for console errors (CSP violations among them) on the way.
import { checkAccessibility, newPerson, screenshot, useBrowser, waitForMessages, type Person } from "../support/browser.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createTestUser, type TestUser } from "../support/users.ts";

/** One mode is enough for pictures: the first of those this run covers. */
const mode = MODES[0];

describe(`the web client's main screens (${mode})`, () => {
  const handle = useBrowser();
  let server: TestServer;
  let person: Person;
  let engineering: number;

  beforeAll(async () => {
    server = await startTestServer(mode);
    const people: TestUser[] = [];
    for (const name of ["Ada Lovelace", "Grace Hopper", "Alan Turing"]) people.push(await createTestUser(server, name));
    const [ada, grace, alan] = people;
    const everyone = [OWNER_EMAIL, ...people.map((p) => p.email)];
    await subscribeTo(server.owner, ["engineering", "design", "random"], { principals: everyone });
    const streams = await server.owner.get("/streams");
    engineering = (streams.body.streams as Array<{ name: string; stream_id: number }>).find((s) => s.name === "engineering")!.stream_id;
    await sendStreamMessage(ada.client, "engineering", "deploys", "Deploying **v2.4** to staging now.");
    await sendStreamMessage(grace.client, "engineering", "deploys", "Looks good here. The migration ran in `1.2 s`:\n```sql\nALTER TABLE message ADD COLUMN edited boolean;\n```");
    await sendStreamMessage(alan.client, "engineering", "deploys", "@**Ada Lovelace** can we roll it out to production after lunch?");
    const id = await sendStreamMessage(ada.client, "engineering", "deploys", "Sure, I'll watch the dashboards :eyes:");
    await grace.client.post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" });
    await sendStreamMessage(grace.client, "design", "new sidebar", "Here is the new sidebar, with unread counts:\n- channels first\n- then direct messages");
    await sendStreamMessage(alan.client, "random", "lunch", "Anyone for noodles at 12:30?");
    await server.owner.post("/messages", { type: "private", to: JSON.stringify([ada.id]), content: "Thanks for handling the release!" });

    // Signed in without the form, which test/web/login.test.ts covers.
    person = await newPerson(handle.browser, server, { email: OWNER_EMAIL, password: OWNER_PASSWORD }, { login: "http" });
  });

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
    await screenshot(person.page, "feed", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone();
  });

  it("a topic of a channel", async () => {
    await open(`#narrow/channel/${engineering}-engineering/topic/deploys`);
    await waitForMessages(person.page);
    await person.page.getByText("watch the dashboards").first().waitFor();
    await screenshot(person.page, "channel-topic", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone();
  });

  it("personal settings", async () => {
    await open("#settings/profile");
    await person.page.getByRole("dialog").or(person.page.locator('[data-testid="settings"]')).first().waitFor();
    await screenshot(person.page, "settings", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone();
  });

  it("organization administration", async () => {
    await open("#organization/users");
    await person.page.getByText("Grace Hopper").first().waitFor();
    await screenshot(person.page, "organization-users", { readme: true });
    await checkAccessibility(person.page);
    person.problems.expectNone();
  });
});
