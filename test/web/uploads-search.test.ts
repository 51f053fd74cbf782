// Files and search in the web client, end to end in Chromium, in both modes: uploads by picking a
// file, dropping it on the compose box and pasting it, each becoming a `[name](/user_uploads/…)`
// link that the other person's browser can load (as an image, through their session); search with
// narrow operators, full text, sender: and is:starred; and axe on the busy screens.
import type { Page } from "playwright-core";
import { checkAccessibility, goToHash, MESSAGE_ROW, newPerson, rowsWithText, until, useBrowser, waitForMessages, type Person, type Problem } from "../support/browser.ts";
import { makePng } from "../support/images.ts";
import { sendStreamMessage, subscribeTo } from "../support/messages.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";
import { createMember, type TestUser } from "../support/users.ts";

const MEMBER_PASSWORD = "member-pass";
const UPLOAD_LINK = /\[([^\]]+)\]\((\/user_uploads\/[^)\s]+)\)/;

jest.setTimeout(90_000);

/** The page's DOM classes the browser-side functions use (the tests compile without the DOM lib). */
interface BrowserDom {
  DataTransfer: new () => { items: { add(file: File): void } };
  ClipboardEvent: new (type: string, init: { clipboardData: unknown; bubbles: boolean; cancelable: boolean }) => Event;
}

/** Gravatar pictures cannot load on the test machine's closed network (the avatar then shows an initial). */
const offlineGravatar = (problem: Problem) => problem.text.includes("secure.gravatar.com");

async function closeCompose(page: Page): Promise<void> {
  const close = page.locator(".compose-open .compose-close");
  if ((await close.count()) > 0) await close.click();
  await page.locator(".compose-collapsed").waitFor();
}

async function openReply(page: Page): Promise<void> {
  await closeCompose(page);
  await page.locator(".compose-collapsed .compose-reply").click();
  await page.locator(".compose-open textarea").waitFor();
}

/** Waits for the compose text to hold an upload's finished link; returns [name, url]. */
async function uploadedLink(page: Page): Promise<[string, string]> {
  const text = await until("the upload's link in the compose box", () => page.locator(".compose-open textarea").inputValue(), (v) => UPLOAD_LINK.test(v) && !v.includes("Uploading"));
  const match = UPLOAD_LINK.exec(text)!;
  return [match[1], match[2]];
}

async function sendCompose(page: Page): Promise<void> {
  const field = page.locator(".compose-open textarea");
  await field.press("Enter");
  await until("the compose box to empty after sending", () => field.inputValue(), (v) => v === "");
}

/**
 * Whether `url` loads as an image in `page` (with that person's cookies): naturalWidth > 0. The
 * server renders an upload as a plain link (no inline preview yet, see the uploads test), so the
 * picture is loaded the way a preview would load it.
 */
function loadsAsImage(page: Page, url: string): Promise<number> {
  return page.evaluate(
    (src) =>
      new Promise<number>((resolve) => {
        const Picture = (globalThis as unknown as { Image: new () => { onload: (() => void) | null; onerror: (() => void) | null; src: string; naturalWidth: number } }).Image;
        const img = new Picture();
        img.onload = () => resolve(img.naturalWidth);
        img.onerror = () => resolve(0);
        img.src = src;
      }),
    url,
  );
}

/** Types into the search bar and presses Enter. */
async function search(page: Page, query: string): Promise<void> {
  const box = page.getByRole("combobox", { name: "Search messages" }).or(page.locator('input[aria-label="Search messages"]')).first();
  await box.click();
  await box.fill(query);
  // Enter narrows to what was typed (a suggestion is not highlighted until an arrow key).
  await box.press("Enter");
}

describe.each(MODES)("uploads and search in the web client (%s)", (mode) => {
  const handle = useBrowser();
  let server: TestServer;
  let bobUser: TestUser;
  let alice: Person;
  let bob: Person;
  let general: number;
  let png: Buffer;

  const topicHash = (topic: string) => `#narrow/channel/${general}-general/topic/${topic}`;

  beforeAll(async () => {
    server = await startTestServer(mode);
    bobUser = await createMember(server, "bob@example.com", "Bob Builder");
    await subscribeTo(server.owner, ["general"], { principals: [OWNER_EMAIL, bobUser.email] });
    const streams = await server.owner.get("/streams");
    general = (streams.body.streams as Array<{ name: string; stream_id: number }>).find((s) => s.name === "general")!.stream_id;
    await sendStreamMessage(server.owner, "general", "searchable", "The aardvark report is ready");
    await sendStreamMessage(bobUser.client, "general", "searchable", "Bob answers about the budget");
    await sendStreamMessage(server.owner, "general", "other", "Nothing about animals here");
    png = await makePng(24, 16, "#cc3366");
    alice = await newPerson(handle.browser, server, { email: OWNER_EMAIL, password: OWNER_PASSWORD });
    bob = await newPerson(handle.browser, server, { email: bobUser.email, password: MEMBER_PASSWORD });
    await waitForMessages(alice.page, 30_000);
    await waitForMessages(bob.page, 30_000);
  }, 150_000);

  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await server?.stop();
  });

  it("uploads a picked file: the link goes into the message, and the other person can load the image", async () => {
    await goToHash(alice.page, topicHash("uploads"));
    await goToHash(bob.page, topicHash("uploads"));
    await openReply(alice.page);
    await alice.page.locator('.compose-open input[type="file"]').setInputFiles({ name: "picked.png", mimeType: "image/png", buffer: png });
    const [name, url] = await uploadedLink(alice.page);
    expect(name).toBe("picked.png");
    await sendCompose(alice.page);

    const row = rowsWithText(bob.page, "picked.png").first();
    await row.waitFor({ timeout: 20_000 });
    const href = await row.locator(`.msg-content a[href*="/user_uploads/"]`).first().getAttribute("href");
    expect(href).toContain(url);
    // The server renders Zulip's inline preview for an uploaded image: Bob's row shows the
    // picture itself, loaded with his session.
    const inline = row.locator(`.msg-content .message_inline_image img[src*="/user_uploads/"]`);
    await inline.first().waitFor({ timeout: 20_000 });
    expect(await inline.first().getAttribute("src")).toContain(url);
    await until("the inline image to load", () => inline.first().evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth), (w) => w > 0);
    expect(await inline.first().evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(24);
    alice.problems.expectNone(offlineGravatar);
    bob.problems.expectNone(offlineGravatar);
  });

  it("uploads a file dropped on the compose box", async () => {
    await goToHash(alice.page, topicHash("uploads"));
    await openReply(alice.page);
    const data = await alice.page.evaluateHandle((bytes) => {
      const transfer = new (globalThis as unknown as BrowserDom).DataTransfer();
      transfer.items.add(new File([new Uint8Array(bytes)], "dropped.png", { type: "image/png" }));
      return transfer;
    }, [...png]);
    const target = alice.page.locator(".compose-open .compose-editor");
    await target.dispatchEvent("dragover", { dataTransfer: data });
    await target.dispatchEvent("drop", { dataTransfer: data });
    const [name, url] = await uploadedLink(alice.page);
    expect(name).toBe("dropped.png");
    await sendCompose(alice.page);
    await rowsWithText(bob.page, "dropped.png").first().waitFor({ timeout: 20_000 });
    await expect(loadsAsImage(bob.page, url)).resolves.toBe(24);
    alice.problems.expectNone(offlineGravatar);
  });

  it("uploads a pasted image", async () => {
    await goToHash(alice.page, topicHash("uploads"));
    await openReply(alice.page);
    // A synthetic ClipboardEvent carries the DataTransfer given to its constructor, as a real
    // paste of a screenshot does (no text/plain, one file).
    await alice.page.locator(".compose-open textarea").evaluate((field, bytes) => {
      const transfer = new (globalThis as unknown as BrowserDom).DataTransfer();
      transfer.items.add(new File([new Uint8Array(bytes)], "pasted.png", { type: "image/png" }));
      field.dispatchEvent(new (globalThis as unknown as BrowserDom).ClipboardEvent("paste", { clipboardData: transfer, bubbles: true, cancelable: true }));
    }, [...png]);
    const [name, url] = await uploadedLink(alice.page);
    expect(name).toBe("pasted.png");
    await sendCompose(alice.page);
    await rowsWithText(bob.page, "pasted.png").first().waitFor({ timeout: 20_000 });
    await expect(loadsAsImage(bob.page, url)).resolves.toBe(24);
    alice.problems.expectNone(offlineGravatar);
  });

  it("searches with operators, full text, sender: and is:starred", async () => {
    const page = alice.page;
    await goToHash(page, "#feed");
    await closeCompose(page);
    await rowsWithText(page, "Nothing about animals").first().waitFor();

    await search(page, "channel:general topic:searchable");
    await until("the URL to name the topic", () => decodeURIComponent(new URL(page.url()).hash), (h) => h.includes("topic/searchable"));
    await rowsWithText(page, "aardvark report").first().waitFor();
    await until("only the topic's messages to show", () => page.locator(MESSAGE_ROW).count(), (n) => n === 2);
    await expect(rowsWithText(page, "Nothing about animals").count()).resolves.toBe(0);

    await search(page, "aardvark");
    await until("the URL to be a search", () => decodeURIComponent(new URL(page.url()).hash), (h) => h.includes("search/aardvark"));
    await rowsWithText(page, "aardvark report").first().waitFor();
    await until("only the match to show", () => page.locator(MESSAGE_ROW).count(), (n) => n === 1);

    await search(page, `sender:${bobUser.email}`);
    await until("the URL to name the sender", () => decodeURIComponent(new URL(page.url()).hash), (h) => h.includes("sender"));
    await rowsWithText(page, "Bob answers about the budget").first().waitFor();
    await until("only Bob's messages to show", () => page.locator(MESSAGE_ROW).count(), (n) => n === 1);

    const id = await sendStreamMessage(server.owner, "general", "other", "Starred for the search");
    await server.owner.post("/messages/flags", { messages: JSON.stringify([id]), op: "add", flag: "starred" });
    await search(page, "is:starred");
    await until("the URL to be the starred view", () => decodeURIComponent(new URL(page.url()).hash), (h) => h.includes("is/starred"));
    await rowsWithText(page, "Starred for the search").first().waitFor();
    await until("only starred messages to show", () => page.locator(MESSAGE_ROW).count(), (n) => n === 1);
    alice.problems.expectNone(offlineGravatar);
  });

  it("passes axe on the feed, the open compose box and search results", async () => {
    const page = bob.page;
    await goToHash(page, "#feed");
    await closeCompose(page);
    await rowsWithText(page, "aardvark report").first().waitFor();
    await checkAccessibility(page);

    await page.locator(".compose-collapsed .compose-new").first().click();
    await page.locator(".compose-open textarea").waitFor();
    await page.locator(".compose-open textarea").fill("Some **text** being written");
    await checkAccessibility(page);
    await closeCompose(page);

    await search(page, "aardvark");
    await rowsWithText(page, "aardvark report").first().waitFor();
    await until("the search results", () => page.locator(MESSAGE_ROW).count(), (n) => n === 1);
    await checkAccessibility(page);
    bob.problems.expectNone(offlineGravatar);
  });
});
