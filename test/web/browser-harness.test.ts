// The browser harness itself (test/support/browser.ts), against pages served here under the web
// client's CSP: the host mapping reaches loopback with the Host a subdomain sends, CSP violations
// and uncaught errors are collected, axe runs despite the CSP and names what fails, screenshots
// land in test/artifacts.
import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { checkAccessibility, newPerson, originOf, screenshot, useBrowser } from "../support/browser.ts";

/** What the predicates read of the page (the server's tsconfig has no DOM types). */
interface PageGlobals {
  document: { body: { dataset: Record<string, string | undefined> } };
}

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'";

const PAGES: Record<string, string> = {
  "/clean": `<!doctype html><html lang="en"><head><title>Clean</title></head><body><main><h1>Host {HOST}</h1><p>Fine.</p><script src="/ok.js"></script></main></body></html>`,
  "/bad": `<!doctype html><html lang="en"><head><title>Bad</title></head><body><main><h1>Bad</h1><button></button><img src="/missing.png"><script>window.inline = 1</script><script src="/throws.js"></script></main></body></html>`,
};

describe("the browser harness", () => {
  const handle = useBrowser();
  let server: http.Server;
  let baseUrl: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = req.url ?? "/";
      if (url.endsWith(".js")) {
        res.writeHead(200, { "Content-Type": "text/javascript" });
        res.end(url === "/throws.js" ? "throw new Error('thrown by a script')" : "document.body.dataset.ready = '1'");
        return;
      }
      const page = PAGES[url];
      if (!page) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": CSP });
      res.end(page.replace("{HOST}", req.headers.host ?? ""));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it("reaches a subdomain of chat.test on loopback, as a secure context, with its Host header", async () => {
    const person = await newPerson(handle.browser, { baseUrl }, null, { subdomain: "zephyr" });
    try {
      const port = new URL(baseUrl).port;
      expect(person.origin).toBe(`http://zephyr.chat.test:${port}`);
      await person.page.goto("/clean");
      await expect(person.page.locator("h1").innerText()).resolves.toBe(`Host zephyr.chat.test:${port}`);
      await expect(person.page.evaluate("isSecureContext")).resolves.toBe(true);
      // A function, not a string: Playwright evaluates a string predicate with eval, which the CSP forbids.
      await person.page.waitForFunction(() => (globalThis as unknown as PageGlobals).document.body.dataset.ready === "1");
      await checkAccessibility(person.page);
      person.problems.expectNone();
    } finally {
      await person.close();
    }
  });

  it("collects CSP violations, uncaught errors and failed loads, and names accessibility failures", async () => {
    const person = await newPerson(handle.browser, baseUrl, null);
    try {
      expect(person.origin).toBe(originOf(baseUrl));
      await person.page.goto("/bad");
      await person.page.waitForLoadState("load");
      const texts = person.problems.problems.map((p) => `${p.kind}: ${p.text}`).join("\n");
      expect(texts).toMatch(/console: .*Content Security Policy/);
      expect(texts).toMatch(/pageerror: .*thrown by a script/);
      expect(texts).toMatch(/console: .*404/);
      expect(() => person.problems.expectNone()).toThrow(/problem\(s\)/);
      person.problems.expectNone((p) => p.kind === "console" || p.kind === "pageerror");
      await expect(checkAccessibility(person.page)).rejects.toThrow(/\[critical\] button-name[\s\S]*<button><\/button>/);
      // The CSP is still in force after axe ran: nothing let inline script through.
      await expect(person.page.evaluate("window.inline")).resolves.toBeUndefined();
      const file = await screenshot(person.page, "harness-bad-page");
      expect(existsSync(file)).toBe(true);
    } finally {
      await person.close();
    }
  });
});
