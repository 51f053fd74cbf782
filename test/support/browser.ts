// The browser the web client's tests and benchmark drive: Debian's Chromium through playwright-core,
// one browser per test file, a fresh context (own cookies, cache, storage) per person.
//
// Reaching the server: test servers listen on 127.0.0.1 with EXTERNAL_HOST chat.test, and pick the
// organization from the Host header (a host that is not `<subdomain>.chat.test` is the default
// organization). A person of the default organization browses http://127.0.0.1:<port>: the Host
// the server sees maps to that organization, the cookies are host-only to 127.0.0.1 (cookies
// ignore ports: each person has a context of their own, so two servers never share one), and
// the page is a secure context as http://localhost is for a trial install. Any other
// organization is http://<subdomain>.chat.test:<port>: the host resolver maps *.chat.test to
// 127.0.0.1 and treats it as secure, so the Host header names the subdomain as a real one would.
//
// CSP: the pages forbid inline scripts, so page.addScriptTag (which inlines a file's text) is
// blocked. axe is evaluated through the DevTools protocol instead (page.evaluate of its source),
// which the page's CSP does not govern, so the check needs no bypassCSP and the CSP stays in force
// for everything the test sees: a violation the client causes still shows up as a console error.
// For the same reason, give page.waitForFunction a function, never a string: Playwright evaluates
// a string predicate with eval inside the page, which the CSP ('unsafe-eval' absent) refuses.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type ConsoleMessage, type Page } from "playwright-core";

const ROOT = path.resolve(__dirname, "../..");
export const SCREENSHOT_DIR = path.join(ROOT, "test/artifacts/screenshots");

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** The host names test servers are reached by (their EXTERNAL_HOST), mapped to loopback. */
export const TEST_EXTERNAL_HOSTS = ["chat.test"];

export function chromiumArgs(hosts: string[] = TEST_EXTERNAL_HOSTS): string[] {
  const rules = hosts.flatMap((host) => [`MAP ${host} 127.0.0.1`, `MAP *.${host} 127.0.0.1`]).join(", ");
  return [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    `--host-resolver-rules=${rules}`,
    // Subdomains are secure contexts, as behind TLS (the root name with a port cannot be listed).
    `--unsafely-treat-insecure-origin-as-secure=${hosts.map((host) => `*.${host}`).join(",")}`,
  ];
}

/** Launches Chromium (playwright gives it a fresh temporary profile, removed on close). */
export function launchBrowser(options: { hosts?: string[]; extraArgs?: string[] } = {}): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...chromiumArgs(options.hosts), ...(options.extraArgs ?? [])], timeout: 60_000 });
}

export interface BrowserHandle {
  /** The file's browser (launched in beforeAll). */
  readonly browser: Browser;
}

/**
 * One browser for the calling test file: launched in beforeAll, closed in afterAll, with every
 * person's context created through it closed first.
 */
export function useBrowser(): BrowserHandle {
  let browser: Browser | null = null;
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser() {
      if (!browser) throw new Error("the browser is launched in beforeAll: use it inside a test or hook");
      return browser;
    },
  };
}

/** Something with a base URL on 127.0.0.1: a TestServer, a bench server, or the URL itself. */
export type ServerTarget = string | { baseUrl: string };

/**
 * The origin a browser uses for an organization of `server`: its own address for the default
 * organization, `http://<subdomain>.<externalHost>:<port>` for any other.
 */
export function originOf(server: ServerTarget, subdomain = "", externalHost = TEST_EXTERNAL_HOSTS[0]): string {
  const base = new URL(typeof server === "string" ? server : server.baseUrl);
  if (subdomain === "") return base.origin;
  return `${base.protocol}//${subdomain}.${externalHost}:${base.port}`;
}

export interface Problem {
  kind: "console" | "pageerror" | "requestfailed" | "http";
  page: string;
  text: string;
}

/**
 * What went wrong in a context's pages, for tests to assert none happened: console errors (CSP
 * violations are reported there, as are failed resource loads), uncaught exceptions, failed
 * requests, and server errors (5xx). Requests aborted by navigation or closing are not problems.
 */
export class PageProblems {
  readonly problems: Problem[] = [];

  watch(page: Page): void {
    const where = () => page.url();
    page.on("console", (message: ConsoleMessage) => {
      if (message.type() !== "error") return;
      const location = message.location();
      // The browser's own request for a tab icon the page never asked for.
      if (/\/favicon\.ico$/.test(location.url)) return;
      // The server names Gravatar's address for avatars nobody uploaded (as Zulip does); these
      // machines are offline, so those loads fail, and the client shows initials instead.
      if (/^https:\/\/secure\.gravatar\.com\//.test(location.url)) return;
      const at = location.url ? ` (${location.url}:${location.lineNumber})` : "";
      this.problems.push({ kind: "console", page: where(), text: `${message.text()}${at}` });
    });
    page.on("pageerror", (error) => this.problems.push({ kind: "pageerror", page: where(), text: error.stack ?? error.message }));
    page.on("requestfailed", (request) => {
      const failure = request.failure()?.errorText ?? "failed";
      if (failure.includes("ERR_ABORTED")) return;
      if (request.url().startsWith("https://secure.gravatar.com/")) return;
      this.problems.push({ kind: "requestfailed", page: where(), text: `${request.method()} ${request.url()}: ${failure}` });
    });
    page.on("response", (response) => {
      if (response.status() >= 500) this.problems.push({ kind: "http", page: where(), text: `${response.request().method()} ${response.url()}: ${response.status()}` });
    });
  }

  /** The problems `allow` does not excuse (e.g. the console error of a deliberately failed request). */
  unexpected(allow: (problem: Problem) => boolean = () => false): Problem[] {
    return this.problems.filter((problem) => !allow(problem));
  }

  /** Throws, listing them, if anything went wrong that `allow` does not excuse. */
  expectNone(allow?: (problem: Problem) => boolean): void {
    const unexpected = this.unexpected(allow);
    if (unexpected.length === 0) return;
    throw new Error(`the browser reported ${unexpected.length} problem(s):\n${unexpected.map((p) => `  [${p.kind}] ${p.text}\n    on ${p.page}`).join("\n")}`);
  }

  clear(): void {
    this.problems.length = 0;
  }
}

/** A context's problems, from every page it opens (watch pages opened before this yourself). */
export function watchContext(context: BrowserContext): PageProblems {
  const problems = new PageProblems();
  for (const page of context.pages()) problems.watch(page);
  context.on("page", (page) => problems.watch(page));
  return problems;
}

/** What every person's context is: a laptop-sized window, English, UTC, no animations. */
export const DEFAULT_CONTEXT_OPTIONS: BrowserContextOptions = {
  viewport: { width: 1280, height: 800 },
  locale: "en-US",
  timezoneId: "UTC",
  colorScheme: "light",
  reducedMotion: "reduce",
};

export interface Person {
  context: BrowserContext;
  /** Their first page: at `/` once signed in. */
  page: Page;
  origin: string;
  problems: PageProblems;
  /** Cookies of their origin by name (sessionid, csrftoken). */
  cookies(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

export interface NewPersonOptions {
  /** The organization's subdomain; the default organization when omitted. */
  subdomain?: string;
  contextOptions?: BrowserContextOptions;
  /**
   * How to sign in: through the login form (the default), or with plain HTTP requests to the
   * same endpoints (loginByHttp), leaving the page blank, for tests about what comes after.
   */
  login?: "form" | "http";
}

/**
 * A person at their own browser (a fresh context, baseURL their organization's origin, so
 * `page.goto("/#narrow/...")` works), signed in through the login form when `credentials` are
 * given (their page then shows `/`), else on a blank page.
 */
export async function newPerson(
  browser: Browser,
  server: ServerTarget,
  credentials: { email: string; password: string } | null,
  options: NewPersonOptions = {},
): Promise<Person> {
  const origin = originOf(server, options.subdomain);
  const context = await browser.newContext({ ...DEFAULT_CONTEXT_OPTIONS, ...options.contextOptions, baseURL: origin });
  const problems = watchContext(context);
  let page: Page;
  if (credentials && options.login !== "http") {
    page = await loginAs(context, origin, credentials.email, credentials.password);
  } else {
    if (credentials) await loginByHttp(context, server, credentials.email, credentials.password, { subdomain: options.subdomain });
    page = await context.newPage();
  }
  return {
    context,
    page,
    origin,
    problems,
    async cookies() {
      return Object.fromEntries((await context.cookies(origin)).map((cookie) => [cookie.name, cookie.value]));
    },
    close: () => context.close(),
  };
}

/** The login form's fields (`email`; Zulip's own form names it `username`). */
const EMAIL_FIELD = 'form input[name="email"], form input[name="username"]';
const PASSWORD_FIELD = 'form input[name="password"]';

/**
 * Signs in through the real login form at `<origin>/login` and returns the page, which the
 * server has sent on to `/` (the app). Throws, with what the page says, if it did not: no session
 * cookie, or still on a login page.
 */
export async function loginAs(context: BrowserContext, server: ServerTarget, email: string, password: string, options: { subdomain?: string; page?: Page } = {}): Promise<Page> {
  const origin = originOf(server, options.subdomain);
  const page = options.page ?? (await context.newPage());
  await submitLogin(page, origin, email, password);
  const landed = new URL(page.url());
  const cookies = new Set((await context.cookies(origin)).map((cookie) => cookie.name));
  if (landed.pathname !== "/" || !cookies.has("sessionid") || !cookies.has("csrftoken")) {
    const said = (await page.locator("body").innerText().catch(() => "")).slice(0, 500);
    throw new Error(`signing in as ${email} ended at ${page.url()} with cookies [${[...cookies].join(", ")}]; the page says:\n${said}`);
  }
  return page;
}

/**
 * Signs in with plain HTTP requests to the same login endpoints (GET /login for the form's token,
 * POST /accounts/login/) and puts the session's cookies into `context`: a valid session without
 * driving the form, for a benchmark that measures what comes after. Returns the cookies by name.
 */
export async function loginByHttp(context: BrowserContext, server: ServerTarget, email: string, password: string, options: { subdomain?: string } = {}): Promise<Record<string, string>> {
  const origin = originOf(server, options.subdomain);
  // Loopback with the organization's Host, as the browser would send it.
  const base = typeof server === "string" ? new URL(server).origin : new URL(server.baseUrl).origin;
  const host = new URL(origin).host;
  const form = await plainRequest(`${base}/login`, { Host: host });
  const formCookies = setCookies(form.setCookies);
  const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(form.body)?.[1];
  const csrf = formCookies.get("csrftoken")?.value;
  if (form.status !== 200 || !token || !csrf) throw new Error(`GET ${origin}/login answered ${form.status} without a form token and csrftoken cookie`);
  const answer = await plainRequest(
    `${base}/accounts/login/`,
    { Host: host, "Content-Type": "application/x-www-form-urlencoded", Cookie: `csrftoken=${csrf}` },
    new URLSearchParams({ csrfmiddlewaretoken: token, username: email, password }).toString(),
  );
  const cookies = setCookies(answer.setCookies);
  if (answer.status !== 302 || !cookies.has("sessionid")) throw new Error(`POST ${origin}/accounts/login/ as ${email} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  await context.addCookies(
    [...cookies.values()].map((c) => ({ name: c.name, value: c.value, url: origin, httpOnly: c.httpOnly, sameSite: c.sameSite })),
  );
  return Object.fromEntries([...cookies.values()].map((c) => [c.name, c.value]));
}

/** One request with node:http (fetch may not set Host); GET, or POST of `body`. */
function plainRequest(url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; setCookies: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: body === undefined ? "GET" : "POST", headers: body === undefined ? headers : { ...headers, "Content-Length": Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, setCookies: res.headers["set-cookie"] ?? [], body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface SetCookie {
  name: string;
  value: string;
  httpOnly: boolean;
  sameSite: "Strict" | "Lax" | "None";
}

function setCookies(headers: string[]): Map<string, SetCookie> {
  const out = new Map<string, SetCookie>();
  for (const header of headers) {
    const [pair, ...attributes] = header.split(";").map((part) => part.trim());
    const eq = pair.indexOf("=");
    const lower = attributes.map((a) => a.toLowerCase());
    const sameSite = lower.find((a) => a.startsWith("samesite="))?.slice("samesite=".length);
    out.set(pair.slice(0, eq), {
      name: pair.slice(0, eq),
      value: pair.slice(eq + 1),
      httpOnly: lower.includes("httponly"),
      sameSite: sameSite === "strict" ? "Strict" : sameSite === "none" ? "None" : "Lax",
    });
  }
  return out;
}

/** Opens `<origin>/login`, fills the form and submits it; resolves once the answer has loaded. */
export async function submitLogin(page: Page, origin: string, email: string, password: string): Promise<void> {
  const response = await page.goto(`${origin}/login`);
  if (!response || response.status() !== 200) throw new Error(`GET ${origin}/login answered ${response?.status()}`);
  await page.locator(EMAIL_FIELD).first().fill(email);
  await page.locator(PASSWORD_FIELD).fill(password);
  // The form posts to the server; wait for the document that answers it (and any redirect after).
  await Promise.all([
    page.waitForNavigation({ waitUntil: "load" }),
    page.locator(PASSWORD_FIELD).press("Enter"),
  ]);
}

/** The client's marker of a usable message list: a row with a message id inside the list. */
export const MESSAGE_ROW = '[data-testid="message-list"] [data-message-id]';

/** Resolves once the message list shows at least one message. */
export async function waitForMessages(page: Page, timeoutMs = 15_000): Promise<void> {
  await page.locator(MESSAGE_ROW).first().waitFor({ state: "attached", timeout: timeoutMs });
}

/**
 * Saves a PNG to test/artifacts/screenshots/<name>.png (CI keeps that folder as an artifact) and
 * returns its path. A `readme` screenshot is also copied to $SAVE_SCREENSHOTS/<name>.png when
 * that is set (npm run web:screenshots sets docs/screenshots, which the README shows).
 */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean; readme?: boolean } = {}): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw new Error(`screenshot name ${JSON.stringify(name)}: lowercase letters, digits and dashes`);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  // Settled first: fonts loaded, nothing still loading (a picture of "Loading…" shows nothing).
  await page.evaluate("document.fonts.ready.then(() => undefined)");
  await waitForSettled(page).catch(() => undefined);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? false, caret: "hide", animations: "disabled" });
  const target = process.env.SAVE_SCREENSHOTS;
  if (options.readme && target) {
    const dir = path.resolve(ROOT, target);
    mkdirSync(dir, { recursive: true });
    copyFileSync(file, path.join(dir, `${name}.png`));
  }
  return file;
}

/** Resolves once nothing on the page says it is loading: no aria-busy element, no "Loading…" text. */
export async function waitForSettled(page: Page, timeoutMs = 5000): Promise<void> {
  await page.waitForFunction(
    () => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): unknown; body: { innerText: string } } }).document;
      return doc.querySelector('[aria-busy="true"]') === null && !/Loading…|Loading\.\.\./.test(doc.body.innerText);
    },
    undefined,
    { timeout: timeoutMs, polling: 100 },
  );
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: Array<{ target: string[]; failureSummary?: string; html: string }>;
}

let axeSource: string | null = null;

/**
 * Runs axe-core on the page as it is now and throws, listing each, if it finds violations of
 * serious or critical impact; returns all violations (minor and moderate ones too) otherwise.
 * `exclude`: CSS selectors axe skips; `disableRules`: rule ids not run.
 */
export async function checkAccessibility(page: Page, options: { exclude?: string[]; disableRules?: string[]; failOn?: string[] } = {}): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  // Evaluated over the DevTools protocol: not an inline script, so the page's CSP allows it.
  const loaded = await page.evaluate(`(() => { if (!window.axe) { ${axeSource}\n } return typeof window.axe; })()`);
  if (loaded !== "object") throw new Error(`axe-core did not load into ${page.url()} (window.axe is ${String(loaded)})`);
  const violations = await page.evaluate(
    async ({ exclude, disableRules }) => {
      const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
      const rules = Object.fromEntries(disableRules.map((id) => [id, { enabled: false }]));
      const result = await axe.run({ include: [["html"]], exclude: exclude.map((selector) => [selector]) }, { resultTypes: ["violations"], rules });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        helpUrl: v.helpUrl,
        nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary, html: n.html.slice(0, 200) })),
      }));
    },
    { exclude: options.exclude ?? [], disableRules: options.disableRules ?? [] },
  );
  const failOn = options.failOn ?? ["serious", "critical"];
  const failing = violations.filter((v) => v.impact !== null && failOn.includes(v.impact));
  if (failing.length > 0) throw new Error(`accessibility violations on ${page.url()}:\n${formatViolations(failing)}`);
  return violations;
}

export function formatViolations(violations: AxeViolation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes.slice(0, 5).map((n) => `      ${n.target.join(" ")}: ${n.html}${n.failureSummary ? `\n        ${n.failureSummary.replace(/\n/g, "\n        ")}` : ""}`);
      const more = v.nodes.length > 5 ? [`      ...and ${v.nodes.length - 5} more`] : [];
      return [`  [${v.impact}] ${v.id}: ${v.help} (${v.helpUrl})`, ...nodes, ...more].join("\n");
    })
    .join("\n");
}

/** Polls `check` (every 100 ms) until it holds; throws `what` with the last value seen otherwise. */
export async function until<T>(what: string, check: () => Promise<T> | T, accept: (value: T) => boolean = Boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await check();
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last saw ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Moves the web client to `hash` in place (a hash change, not a reload: the page stays live). */
export async function goToHash(page: Page, hash: string): Promise<void> {
  await page.evaluate((h) => {
    (globalThis as unknown as { location: { hash: string } }).location.hash = h;
  }, hash);
}

/** The message rows of the list whose text contains `text`. */
export function rowsWithText(page: Page, text: string) {
  return page.locator(MESSAGE_ROW).filter({ hasText: text });
}
