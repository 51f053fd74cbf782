// Everyday chat in the web client, end to end in Chromium, in both modes: two (or three) people at
// their own browsers, signed in through the login form, talking live: messages, unread counts and
// the tab title, direct and group direct messages, typing, reactions, edits and deletes, stars,
// keyboard shortcuts, status, muting and following topics. Everything is asserted as a person sees
// it (the DOM), and each step must appear without a reload, through the event queue.
import type { Page } from "playwright-core";
import { goToHash, MESSAGE_ROW, newPerson, rowsWithText, until, useBrowser, waitForMessages, type Person, type Problem } from "../support/browser.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createMember, type TestUser } from "../support/users.ts";

/** createMember's password, which people type into the login form. */
const MEMBER_PASSWORD = "member-pass";
const OWNER_NAME = "Olivia Owner";

jest.setTimeout(90_000);

/** Gravatar pictures cannot load on the test machine's closed network (the avatar then shows an initial). */
const offlineGravatar = (problem: Problem) => problem.text.includes("secure.gravatar.com");

/** The row's count badge (e.g. `2 unread messages`), or null when none is shown. */
async function countIn(link: ReturnType<Page["locator"]>): Promise<number | null> {
  const badge = link.locator(".sb-count");
  if ((await badge.count()) === 0) return null;
  return Number(await badge.first().innerText());
}

function channelLink(page: Page, name: string) {
  return page.locator('nav[aria-label="Views and channels"] ul[aria-label="Channels"] a.sb-stream').filter({ hasText: name });
}

function topicLink(page: Page, topic: string) {
  return page.locator("a.sb-topic").filter({ hasText: topic });
}

/** Closes the compose box if it is open (the text stays as a draft). */
async function closeCompose(page: Page): Promise<void> {
  const close = page.locator(".compose-open .compose-close");
  if ((await close.count()) > 0) await close.click();
  await page.locator(".compose-collapsed").waitFor();
}

/** Opens the compose box for the conversation in view (its "Message #x > topic" button). */
async function openReply(page: Page): Promise<void> {
  await closeCompose(page);
  await page.locator(".compose-collapsed .compose-reply").click();
  await page.locator(".compose-open textarea").waitFor();
}

/** Types `text` into the open compose box and presses Enter. */
async function sendTyped(page: Page, text: string): Promise<void> {
  const field = page.locator(".compose-open textarea");
  await field.fill(text);
  await field.press("Enter");
  // Sent: the box empties once the server has answered.
  await until(`the compose box to empty after sending ${JSON.stringify(text)}`, () => field.inputValue(), (v) => v === "");
}

/** Opens the actions menu of the (first) row showing `text` and picks `item`. */
async function messageAction(page: Page, text: string, item: string): Promise<void> {
  const row = rowsWithText(page, text).first();
  await row.hover();
  await row.getByRole("button", { name: "Message actions" }).click();
  await page.getByRole("menuitem", { name: item, exact: true }).click();
}

describe.each(MODES)("everyday chat in the web client (%s)", (mode) => {
  const handle = useBrowser();
  let server: TestServer;
  let bobUser: TestUser;
  let carolUser: TestUser;
  let alice: Person; // the owner, Olivia Owner
  let bob: Person;
  let general: number;

  const topicHash = (topic: string) => `#narrow/channel/${general}-general/topic/${topic}`;

  beforeAll(async () => {
    server = await startTestServer(mode);
    bobUser = await createMember(server, "bob@example.com", "Bob Builder");
    carolUser = await createMember(server, "carol@example.com", "Carol Cooper");
    await subscribeTo(server.owner, ["general"], { principals: [OWNER_EMAIL, bobUser.email, carolUser.email] });
    const streams = await server.owner.get("/streams");
    general = (streams.body.streams as Array<{ name: string; stream_id: number }>).find((s) => s.name === "general")!.stream_id;
    await sendStreamMessage(server.owner, "general", "welcome", "Welcome to the team!");
  }, 120_000);

  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await server?.stop();
  });

  /** Bob reads everything so far (through the API), and his tab title shows no count. */
  async function bobCaughtUp(): Promise<void> {
    await bobUser.client.post("/mark_all_as_read", {});
    await until("Bob's tab title to lose its count", () => bob.page.title(), (t) => !t.startsWith("("));
  }

  it("signs both people in through the form; each sees the channels and the messages", async () => {
    alice = await newPerson(handle.browser, server, { email: OWNER_EMAIL, password: OWNER_PASSWORD });
    bob = await newPerson(handle.browser, server, { email: bobUser.email, password: MEMBER_PASSWORD });
    for (const person of [alice, bob]) {
      await waitForMessages(person.page, 30_000);
      await channelLink(person.page, "general").waitFor();
      await rowsWithText(person.page, "Welcome to the team!").first().waitFor();
      person.problems.expectNone(offlineGravatar);
    }
  });

  it("delivers a message live, exactly once, and the reply back", async () => {
    await goToHash(alice.page, topicHash("livechat"));
    await goToHash(bob.page, "#feed");
    await openReply(alice.page);
    await sendTyped(alice.page, "Hello Bob, typed in the browser");
    // Bob's page was not reloaded: the message came through his event queue.
    await rowsWithText(bob.page, "Hello Bob, typed in the browser").first().waitFor({ timeout: 20_000 });
    await expect(rowsWithText(bob.page, "Hello Bob, typed in the browser").count()).resolves.toBe(1);
    // Alice sees her own message once too (the local echo and the server's event are one row).
    await rowsWithText(alice.page, "Hello Bob, typed in the browser").first().waitFor();
    await expect(rowsWithText(alice.page, "Hello Bob, typed in the browser").count()).resolves.toBe(1);

    // Bob replies from the message's actions: compose opens on the same topic.
    await messageAction(bob.page, "Hello Bob, typed in the browser", "Reply");
    await bob.page.locator(".compose-open textarea").waitFor();
    await expect(bob.page.locator('.compose-open input[aria-label="Topic"]').inputValue()).resolves.toBe("livechat");
    await sendTyped(bob.page, "Hi Olivia, replying live");
    await rowsWithText(alice.page, "Hi Olivia, replying live").first().waitFor({ timeout: 20_000 });
    await expect(rowsWithText(alice.page, "Hi Olivia, replying live").count()).resolves.toBe(1);
    // In the topic Alice is viewing.
    await expect(alice.page.locator(".msg-recipient-topic").first().innerText()).resolves.toBe("livechat");

    // An emoji in the text comes as the server's `<span class="emoji emoji-1f642">:smile:</span>`;
    // the client draws it as the glyph, keeping the name for assistive technology.
    await sendStreamMessage(server.owner, "general", "livechat", "Glyph check :smile:");
    const emoji = rowsWithText(bob.page, "Glyph check").first().locator("span.emoji");
    await emoji.waitFor({ timeout: 20_000 });
    await expect(emoji.innerText()).resolves.toBe("\u{1F642}"); // Zulip's :smile: is U+1F642
    await expect(emoji.getAttribute("aria-label")).resolves.toBe("smile");
    alice.problems.expectNone(offlineGravatar);
    bob.problems.expectNone(offlineGravatar);
  });

  it("counts unread messages in the sidebar and the tab title, and marks them read when opened", async () => {
    await goToHash(bob.page, topicHash("elsewhere"));
    await closeCompose(bob.page);
    await bobCaughtUp();
    await sendStreamMessage(server.owner, "general", "unreadtopic", "First unread message");
    await sendStreamMessage(server.owner, "general", "unreadtopic", "Second unread message");

    await until("Bob's channel count to be 2", () => countIn(channelLink(bob.page, "general")), (n) => n === 2);
    await until("Bob's topic count to be 2", () => countIn(topicLink(bob.page, "unreadtopic")), (n) => n === 2);
    await until("Bob's tab title to start with (2)", () => bob.page.title(), (t) => t.startsWith("(2)"));

    await topicLink(bob.page, "unreadtopic").click();
    await rowsWithText(bob.page, "Second unread message").first().waitFor();
    await until("Bob's topic count to go", () => countIn(topicLink(bob.page, "unreadtopic")), (n) => n === null);
    await until("Bob's channel count to go", () => countIn(channelLink(bob.page, "general")), (n) => n === null);
    await until("Bob's tab title to lose its count", () => bob.page.title(), (t) => !t.startsWith("("));
    // The server agrees: nothing unread for Bob any more.
    await until(
      "the server to have Bob's messages read",
      async () => (await bobUser.client.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) })).body.messages.length,
      (n) => n === 0,
    );
    bob.problems.expectNone(offlineGravatar);
  });

  it("sends direct and group direct messages from the compose box", async () => {
    await goToHash(bob.page, topicHash("elsewhere"));
    await bobCaughtUp();
    await goToHash(alice.page, "#feed");
    await closeCompose(alice.page);
    await alice.page.locator(".compose-collapsed").getByRole("button", { name: "New direct message" }).click();
    const recipient = alice.page.locator('.compose-open input[aria-label="Add a recipient"]');
    await recipient.fill("Bob");
    await alice.page.getByRole("option", { name: /Bob Builder/ }).first().waitFor();
    await recipient.press("Enter");
    await alice.page.locator(".compose-pill").filter({ hasText: "Bob Builder" }).waitFor();
    await recipient.press("Enter");
    await sendTyped(alice.page, "A direct word for Bob");

    const dms = bob.page.locator('ul[aria-label="Direct messages"] a');
    const fromAlice = dms.filter({ hasText: OWNER_NAME });
    await until("Bob's DM with Olivia to show 1 unread", () => countIn(fromAlice), (n) => n === 1);

    // A group: Alice, Bob and Carol.
    await closeCompose(alice.page);
    await alice.page.locator(".compose-collapsed").getByRole("button", { name: "New direct message" }).click();
    for (const name of ["Bob", "Carol"]) {
      await recipient.fill(name);
      await alice.page.getByRole("option", { name: new RegExp(name) }).first().waitFor();
      await recipient.press("Enter");
    }
    await expect(alice.page.locator(".compose-pill").count()).resolves.toBe(2);
    await recipient.press("Enter");
    await sendTyped(alice.page, "Hello to the three of us");
    const group = dms.filter({ hasText: OWNER_NAME }).filter({ hasText: "Carol Cooper" });
    await until("Bob's group DM to show 1 unread", () => countIn(group), (n) => n === 1);
    await group.click();
    await rowsWithText(bob.page, "Hello to the three of us").first().waitFor();
    await expect(bob.page.locator(".msg-recipient-dm").first().innerText()).resolves.toMatch(/Carol Cooper/);
    // Carol got it too.
    const carolSees = await carolUser.client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 });
    expect(carolSees.body.messages[0].content).toContain("Hello to the three of us");
    alice.problems.expectNone(offlineGravatar);
    bob.problems.expectNone(offlineGravatar);
  });

  it("shows who is typing in the topic in view", async () => {
    await goToHash(bob.page, topicHash("typing"));
    await goToHash(alice.page, topicHash("typing"));
    await openReply(alice.page);
    await alice.page.locator(".compose-open textarea").pressSequentially("I am writing something long", { delay: 60 });
    await bob.page.locator(".typing-notice").filter({ hasText: `${OWNER_NAME} is typing` }).waitFor({ timeout: 20_000 });
    await alice.page.locator(".compose-open textarea").press("Enter");
    await rowsWithText(bob.page, "I am writing something long").first().waitFor();
    await until("the typing notice to go once sent", () => bob.page.locator(".typing-notice").innerText(), (t) => !t.includes("typing"), 30_000);
    bob.problems.expectNone(offlineGravatar);
  });

  it("adds reactions through the picker, and toggles them by the chip", async () => {
    await sendStreamMessage(server.owner, "general", "reactions", "React to this one");
    await goToHash(alice.page, topicHash("reactions"));
    await goToHash(bob.page, topicHash("reactions"));
    await rowsWithText(bob.page, "React to this one").first().waitFor();
    await messageAction(bob.page, "React to this one", "Add reaction");
    const search = bob.page.getByRole("combobox", { name: "Search emoji" });
    await search.fill("tada");
    await bob.page.getByRole("option", { name: "tada" }).first().click();

    const chip = rowsWithText(alice.page, "React to this one").first().locator(".msg-reaction");
    await chip.first().waitFor({ timeout: 20_000 });
    await expect(chip.locator(".msg-reaction-count").innerText()).resolves.toBe("1");
    await expect(chip.getAttribute("aria-pressed")).resolves.toBe("false");
    await chip.click();
    await until("the count to be 2", () => chip.locator(".msg-reaction-count").innerText(), (t) => t === "2");
    await expect(chip.getAttribute("aria-pressed")).resolves.toBe("true");
    // Bob sees both.
    const bobChip = rowsWithText(bob.page, "React to this one").first().locator(".msg-reaction-count");
    await until("Bob to see 2", () => bobChip.innerText(), (t) => t === "2");
    await chip.click();
    await until("the count to be 1 again", () => chip.locator(".msg-reaction-count").innerText(), (t) => t === "1");
    await until("Bob to see 1", () => bobChip.innerText(), (t) => t === "1");
    alice.problems.expectNone(offlineGravatar);
    bob.problems.expectNone(offlineGravatar);
  });

  it("edits and deletes a message, live for the other person", async () => {
    await sendStreamMessage(server.owner, "general", "edits", "Frist draft of the plan");
    await sendStreamMessage(server.owner, "general", "edits", "A message to take back");
    await goToHash(alice.page, topicHash("edits"));
    await goToHash(bob.page, topicHash("edits"));
    await rowsWithText(bob.page, "A message to take back").first().waitFor();

    await messageAction(alice.page, "Frist draft of the plan", "Edit message");
    const editor = alice.page.locator('[role="dialog"] textarea');
    await editor.waitFor();
    await editor.fill("First draft of the plan");
    await editor.press("Enter");
    const edited = rowsWithText(bob.page, "First draft of the plan").first();
    await edited.waitFor({ timeout: 20_000 });
    await edited.locator(".msg-edited").waitFor();
    await expect(rowsWithText(bob.page, "Frist draft").count()).resolves.toBe(0);

    await messageAction(alice.page, "A message to take back", "Delete message");
    await alice.page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await until("the deleted message to leave Bob's list", () => rowsWithText(bob.page, "A message to take back").count(), (n) => n === 0);
    await until("and Alice's", () => rowsWithText(alice.page, "A message to take back").count(), (n) => n === 0);
    alice.problems.expectNone(offlineGravatar);
    bob.problems.expectNone(offlineGravatar);
  });

  it("stars a message, which the Starred view shows", async () => {
    await sendStreamMessage(server.owner, "general", "stars", "Remember this one");
    await goToHash(alice.page, topicHash("stars"));
    const row = rowsWithText(alice.page, "Remember this one").first();
    await row.hover();
    await row.getByRole("button", { name: "Star this message" }).click();
    await row.getByRole("button", { name: "Unstar this message" }).waitFor();
    await alice.page.locator('nav[aria-label="Views and channels"] a').filter({ hasText: "Starred" }).click();
    await rowsWithText(alice.page, "Remember this one").first().waitFor();
    expect(new URL(alice.page.url()).hash).toContain("is/starred");
    await expect(alice.page.locator(MESSAGE_ROW).count()).resolves.toBe(1);
    alice.problems.expectNone(offlineGravatar);
  });

  it("works from the keyboard: / and Esc, c and Enter, j/k and r", async () => {
    const page = alice.page;
    await goToHash(page, topicHash("keys"));
    await closeCompose(page);
    await sendStreamMessage(server.owner, "general", "keys", "Keyboard one");
    await sendStreamMessage(server.owner, "general", "keys", "Keyboard two");
    await rowsWithText(page, "Keyboard two").first().waitFor();
    await page.locator(".msg-list-scroller").first().focus();
    const focusedLabel = () =>
      page.evaluate(() => {
        const focused = (globalThis as unknown as { document: { activeElement: { tagName: string; getAttribute(name: string): string | null } | null } }).document.activeElement;
        return focused?.getAttribute("aria-label") ?? focused?.tagName ?? "";
      });

    await page.keyboard.press("/");
    await until("/ to focus the search box", focusedLabel, (l) => l === "Search messages");
    // Esc empties the box (it shows the narrow's operators) and leaves it once empty.
    for (let i = 0; i < 3 && (await focusedLabel()) === "Search messages"; i++) await page.keyboard.press("Escape");
    await until("Esc to leave the search box", focusedLabel, (l) => l !== "Search messages");

    await page.keyboard.press("c");
    await until("c to open compose with the text focused", focusedLabel, (l) => l === "Message text");
    await expect(page.locator('.compose-open input[aria-label="Topic"]').inputValue()).resolves.toBe("keys");
    await page.keyboard.type("Sent with the keyboard");
    await page.keyboard.press("Enter");
    await rowsWithText(page, "Sent with the keyboard").first().waitFor();
    await page.keyboard.press("Escape"); // leaves the field
    await until("Esc to leave the compose box", focusedLabel, (l) => l !== "Message text");
    if (await page.locator(".compose-open").count()) await page.keyboard.press("Escape");

    const selectedText = () => page.locator(".msg-selected .msg-content").first().innerText().catch(() => "");
    await page.keyboard.press("k");
    await until("k to select the newest message", selectedText, (t) => t.includes("Sent with the keyboard"));
    await page.keyboard.press("k");
    await until("k to move up", selectedText, (t) => t.includes("Keyboard two"));
    await page.keyboard.press("k");
    await until("k to move up again", selectedText, (t) => t.includes("Keyboard one"));
    await page.keyboard.press("j");
    await until("j to move down", selectedText, (t) => t.includes("Keyboard two"));

    await page.keyboard.press("r");
    await until("r to open compose on the selected message's topic", focusedLabel, (l) => l === "Message text");
    await expect(page.locator('.compose-open input[aria-label="Topic"]').inputValue()).resolves.toBe("keys");
    await page.keyboard.type("Replied with r");
    await page.keyboard.press("Enter");
    await rowsWithText(page, "Replied with r").first().waitFor();
    alice.problems.expectNone(offlineGravatar);
  });

  it("shows a status set by one person in the other's people list", async () => {
    await bobUser.client.post("/users/me/status", { status_text: "On the train" });
    const bobRow = alice.page.locator('aside[aria-label="People"] a.sb-person').filter({ hasText: "Bob Builder" });
    await bobRow.filter({ hasText: "On the train" }).waitFor({ timeout: 20_000 });
    // Bob is signed in and active: his dot says so.
    await until("Bob to show as active", () => bobRow.locator(".presence-dot").getAttribute("aria-label"), (l) => l === "active", 30_000);
    alice.problems.expectNone(offlineGravatar);
  });

  it("mutes a topic (its unread no longer counts in the channel) and follows another", async () => {
    await goToHash(bob.page, topicHash("elsewhere"));
    await bobCaughtUp();
    await sendStreamMessage(server.owner, "general", "noisy", "Noise one");
    await sendStreamMessage(server.owner, "general", "noisy", "Noise two");
    await sendStreamMessage(server.owner, "general", "signal", "Worth reading");
    await until("Bob's channel count to be 3", () => countIn(channelLink(bob.page, "general")), (n) => n === 3);

    await bob.page.getByRole("button", { name: "Menu of topic noisy" }).click();
    await bob.page.getByRole("menuitem", { name: "Mute topic" }).click();
    await until("the channel count to leave out the muted topic", () => countIn(channelLink(bob.page, "general")), (n) => n === 1);
    await topicLink(bob.page, "noisy").locator('[aria-label="muted"]').waitFor();

    await bob.page.getByRole("button", { name: "Menu of topic signal" }).click();
    await bob.page.getByRole("menuitem", { name: "Follow topic" }).click();
    await topicLink(bob.page, "signal").locator('[aria-label="followed"]').waitFor();
    // The server has both.
    const topics = (await bobUser.client.post("/register", { event_types: JSON.stringify(["user_topic"]), fetch_event_types: JSON.stringify(["user_topic"]) })).body.user_topics as Array<{ topic_name: string; visibility_policy: number }>;
    expect(topics.find((t) => t.topic_name === "noisy")?.visibility_policy).toBe(1);
    expect(topics.find((t) => t.topic_name === "signal")?.visibility_policy).toBe(3);
    bob.problems.expectNone(offlineGravatar);
  });
});
