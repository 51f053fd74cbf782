// The web client as the server serves it (apps/api/src/web-client.ts), over real HTTP: its page at
// `/` only to a signed-in browser and with a strict policy, its hashed files cached for good and
// sent precompressed as Accept-Encoding asks, and nothing outside the build reachable by any path.
import http from "node:http";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { Router } from "express";
import request from "supertest";
import { createHttpApp, disabledRateLimits } from "@chat/http";
import type { ApiServices } from "../../apps/api/src/services.ts";
import { chooseEncoding, readWebClientBuild, WEB_CLIENT_CSP, webClientDir, webClientRoutes } from "../../apps/api/src/web-client.ts";
import { checkResponse } from "../support/openapi.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";

const DIST = webClientDir();

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A request sent as written: fetch and supertest normalise `..` out of a URL before it leaves, and
 * fetch decodes compressed bodies, so neither could show what the server really answers.
 */
function raw(server: TestServer, method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const length = body === undefined ? {} : { "Content-Length": String(Buffer.byteLength(body)) };
    const req = http.request({ host: "127.0.0.1", port: server.running.port!, method, path: target, headers: { ...headers, ...length }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        try {
          const body = Buffer.concat(chunks);
          const type = res.headers["content-type"];
          const json = type?.includes("json") ? JSON.parse(body.toString()) : undefined;
          // Every answer is held to the API document, as ApiClient's are.
          checkResponse(method, target, res.statusCode!, json, type);
          resolve({ status: res.statusCode!, headers: res.headers, body });
        } catch (error) {
          reject(error);
        }
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The `name=value` of each cookie a response sets. */
function setCookies(res: RawResponse): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const header of res.headers["set-cookie"] ?? []) {
    const [pair] = header.split(";");
    const eq = pair.indexOf("=");
    cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return cookies;
}

/** Logs in through the login form, as a browser does; the session's cookies. */
async function logIn(server: TestServer): Promise<{ session: string; csrf: string }> {
  const form = await raw(server, "GET", "/login");
  expect(form.status).toBe(200);
  const formToken = setCookies(form).get("csrftoken")!;
  const body = new URLSearchParams({ username: OWNER_EMAIL, password: OWNER_PASSWORD, csrfmiddlewaretoken: formToken }).toString();
  const login = await raw(server, "POST", "/accounts/login/", { Cookie: `csrftoken=${formToken}`, "Content-Type": "application/x-www-form-urlencoded" }, body);
  expect(login.status).toBe(302);
  expect(login.headers.location).toBe("/");
  const cookies = setCookies(login);
  return { session: cookies.get("sessionid")!, csrf: cookies.get("csrftoken")! };
}

/** The `<script>` and stylesheet `<link>` URLs of a page, and whether any script is inline. */
function pageResources(page: string): { scripts: string[]; styles: string[]; inlineScripts: number } {
  const scripts: string[] = [];
  let inlineScripts = 0;
  for (const [, attributes] of page.matchAll(/<script\b([^>]*)>/gi)) {
    const src = /\bsrc="([^"]+)"/.exec(attributes);
    if (src) scripts.push(src[1]);
    else inlineScripts++;
  }
  const styles = [...page.matchAll(/<link\b[^>]*\brel="stylesheet"[^>]*>/gi)].map(([tag]) => /\bhref="([^"]+)"/.exec(tag)![1]);
  return { scripts, styles, inlineScripts };
}

test("the web client is built, with its text assets precompressed beside them", () => {
  const build = readWebClientBuild();
  expect(build.index).not.toBeNull();
  const assets = [...build.files.entries()].filter(([key]) => key.startsWith("assets/"));
  expect(assets.length).toBeGreaterThan(0);
  for (const [key, file] of assets) {
    if (!/\.(js|css)$/.test(key)) continue;
    const original = readFileSync(file.file);
    // Anything but a tiny file compresses; each copy decompresses to the file.
    if (original.length > 1024) expect(Object.keys(file.variants).sort()).toEqual(["br", "gzip"]);
    if (file.variants.br) expect(brotliDecompressSync(readFileSync(file.variants.br)).equals(original)).toBe(true);
    if (file.variants.gzip) expect(gunzipSync(readFileSync(file.variants.gzip)).equals(original)).toBe(true);
  }
});

test("the encoding sent is the one Accept-Encoding weighs highest, Brotli on a tie", () => {
  const both = ["br", "gzip"] as const;
  expect(chooseEncoding(undefined, both)).toBeNull();
  expect(chooseEncoding("", both)).toBeNull();
  expect(chooseEncoding("identity", both)).toBeNull();
  expect(chooseEncoding("gzip, deflate, br, zstd", both)).toBe("br");
  expect(chooseEncoding("gzip, deflate", both)).toBe("gzip");
  expect(chooseEncoding("x-gzip", both)).toBe("gzip");
  expect(chooseEncoding("br;q=0, gzip", both)).toBe("gzip");
  expect(chooseEncoding("br;q=0.5, gzip;q=0.8", both)).toBe("gzip");
  expect(chooseEncoding("BR ; Q=1", both)).toBe("br");
  expect(chooseEncoding("*", both)).toBe("br");
  expect(chooseEncoding("*;q=0.1, br;q=0", both)).toBe("gzip");
  expect(chooseEncoding("br;q=2, gzip;q=nonsense", both)).toBeNull();
  expect(chooseEncoding("gzip, br", ["gzip"])).toBe("gzip");
  expect(chooseEncoding("br", ["gzip"])).toBeNull();
  expect(chooseEncoding("gzip", [])).toBeNull();
});

test("without a build, `/` answers a 503 page saying how to build the client", async () => {
  const empty = mkdtempSync(path.join(os.tmpdir(), "web-dist-"));
  try {
    const build = readWebClientBuild(empty);
    expect(build.index).toBeNull();
    expect(build.files.size).toBe(0);
    // Nothing but the rate limits is reached before the 503.
    const services = { rateLimits: disabledRateLimits(), ctx: { externalHost: "chat.test" } } as unknown as ApiServices;
    const app = createHttpApp({ api: Router(), root: webClientRoutes(services, build) });
    const res = await request(app).get("/");
    expect(res.status).toBe(503);
    expect(res.headers["content-type"]).toMatch(/^text\/html/);
    expect(res.text).toContain("npm run build");
    const asset = await request(app).get("/static/web/assets/index.js");
    expect(asset.status).toBe(404);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

describe.each(MODES)("the web client's page and files (%s)", (mode) => {
  let server: TestServer;
  let cookie: string;
  let index: Buffer;

  beforeAll(async () => {
    server = await startTestServer(mode);
    // As the server read it when it started.
    index = readFileSync(path.join(DIST, "index.html"));
    cookie = `sessionid=${(await logIn(server)).session}`;
  }, 120_000);
  afterAll(() => server?.stop());

  test("`/` without a session goes to the login page, and nothing is cached", async () => {
    const sessionless: Array<Record<string, string>> = [{}, { Cookie: "sessionid=not-a-session" }, { Cookie: "sessionid=" }, { Cookie: "csrftoken=x" }];
    for (const headers of sessionless) {
      const res = await raw(server, "GET", "/", headers);
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe("/login");
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.body.length).toBe(0);
    }
    // Whatever the request carried stays out of the URL it is sent to.
    const withQuery = await raw(server, "GET", "/?api_key=secret&next=/x");
    expect(withQuery.status).toBe(302);
    expect(withQuery.headers.location).toBe("/login");
  });

  test("`/` with a session is the built page, under a strict policy, never cached without asking", async () => {
    const res = await raw(server, "GET", "/", { Cookie: cookie });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(res.headers["content-security-policy"]).toBe(WEB_CLIENT_CSP);
    expect(res.headers["content-security-policy"]).toContain("script-src 'self';");
    expect(res.headers["content-security-policy"]).not.toContain("unsafe");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("same-origin");
    expect(res.headers["cache-control"]).toBe("no-cache");
    expect(res.headers["content-length"]).toBe(String(index.length));
    expect(res.body.equals(index)).toBe(true);

    const page = res.body.toString();
    const { scripts, styles, inlineScripts } = pageResources(page);
    expect(inlineScripts).toBe(0);
    expect(scripts.length).toBeGreaterThan(0);
    // No inline style either: style-src has no 'unsafe-inline'.
    expect(page).not.toMatch(/<style\b|\sstyle=/i);
    for (const url of [...scripts, ...styles]) {
      expect(url).toMatch(/^\/static\/web\/assets\/[A-Za-z0-9._-]+\.(js|css)$/);
      const asset = await raw(server, "GET", url);
      expect(asset.status).toBe(200);
      expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect(asset.headers["content-type"]).toBe(url.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8");
    }
  });

  test("a session logged out no longer opens the page", async () => {
    const { session, csrf } = await logIn(server);
    const cookies = `sessionid=${session}; csrftoken=${csrf}`;
    expect((await raw(server, "GET", "/", { Cookie: cookies })).status).toBe(200);
    const logout = await raw(server, "POST", "/accounts/logout/", { Cookie: cookies, "X-CSRFToken": csrf });
    expect(logout.status).toBe(302);
    const after = await raw(server, "GET", "/", { Cookie: cookies });
    expect(after.status).toBe(302);
    expect(after.headers.location).toBe("/login");
  });

  test("HEAD `/` answers the page's headers without it", async () => {
    const res = await raw(server, "HEAD", "/", { Cookie: cookie });
    expect(res.status).toBe(200);
    expect(res.headers["content-length"]).toBe(String(index.length));
    expect(res.headers["content-security-policy"]).toBe(WEB_CLIENT_CSP);
    expect(res.body.length).toBe(0);
    expect((await raw(server, "HEAD", "/")).status).toBe(302);
  });

  test("assets are immutable and sent as the build compressed them, by Accept-Encoding", async () => {
    const build = readWebClientBuild();
    const compressed = [...build.files.entries()].filter(([key, file]) => key.startsWith("assets/") && file.variants.br && file.variants.gzip);
    expect(compressed.length).toBeGreaterThan(0);
    for (const [key, file] of compressed) {
      const url = `/static/web/${key}`;
      const original = readFileSync(file.file);
      const cases: Array<[string | undefined, string | undefined, (body: Buffer) => Buffer]> = [
        [undefined, undefined, (body) => body],
        ["identity", undefined, (body) => body],
        ["gzip, deflate, br, zstd", "br", brotliDecompressSync],
        ["gzip, deflate", "gzip", gunzipSync],
        ["br;q=0, gzip", "gzip", gunzipSync],
        ["*", "br", brotliDecompressSync],
      ];
      for (const [accept, encoding, decode] of cases) {
        const res = await raw(server, "GET", url, accept === undefined ? {} : { "Accept-Encoding": accept });
        expect(res.status).toBe(200);
        expect(res.headers["content-encoding"]).toBe(encoding);
        expect(res.headers.vary).toBe("Accept-Encoding");
        expect(res.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
        expect(res.headers["x-content-type-options"]).toBe("nosniff");
        expect(res.headers["content-type"]).toBe(file.type);
        expect(res.headers["content-length"]).toBe(String(res.body.length));
        expect(decode(res.body).equals(original)).toBe(true);
      }
      const head = await raw(server, "HEAD", url, { "Accept-Encoding": "br" });
      expect(head.status).toBe(200);
      expect(head.headers["content-encoding"]).toBe("br");
      expect(head.headers["content-length"]).toBe(String(readFileSync(file.variants.br!).length));
      expect(head.body.length).toBe(0);
    }
  });

  test("no path reaches a file outside the build, or a file of it not served", async () => {
    const asset = [...readWebClientBuild().files.keys()].find((key) => key.startsWith("assets/") && key.endsWith(".js"))!;
    const attempts = [
      "/static/web/../../package.json",
      "/static/web/../../../package.json",
      "/static/web/assets/../../../package.json",
      "/static/web/..%2f..%2fpackage.json",
      "/static/web/..%2F..%2F..%2Fpackage.json",
      "/static/web/%2e%2e/%2e%2e/package.json",
      "/static/web/%2E%2E%2F%2E%2E%2Fpackage.json",
      "/static/web/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json",
      "/static/web/%252e%252e%252f%252e%252e%252fpackage.json",
      "/static/web/..\\..\\package.json",
      "/static/web/..%5c..%5cpackage.json",
      "/static/web/%2fetc%2fpasswd",
      "/static/web//etc/passwd",
      "/static/web/assets/%00",
      `/static/web/${asset}%00`,
      `/static/web/${asset}.br`,
      `/static/web/${asset}.gz`,
      `/static/web/${asset}/`,
      "/static/web/index.html",
      "/static/web/assets",
      "/static/web/assets/",
      "/static/web/",
      "/static/web/.vite/manifest.json",
      "/static/web/assets/missing-0000.js",
    ];
    for (const target of attempts) {
      const res = await raw(server, "GET", target, { "Accept-Encoding": "br, gzip" });
      expect([target, res.status]).toEqual([target, 404]);
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
      expect(JSON.parse(res.body.toString())).toMatchObject({ result: "error", code: "BAD_REQUEST" });
    }
    // Not percent-encoded UTF-8: the server's usual 400, never a file.
    const malformed = await raw(server, "GET", "/static/web/%E0%A4%A");
    expect(malformed.status).toBe(400);
  });
});
