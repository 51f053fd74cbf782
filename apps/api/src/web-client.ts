// The web client (apps/web, built by Vite into apps/web/dist), served by every API node: its page
// at `/` to a signed-in browser (anyone else goes to /login), and its files under /static/web/.
// What the build wrote is read once at start: index.html into memory, and the list of files, so a
// request can only ever name a file that list holds (no path from the URL reaches the file
// system). Hashed assets are cached for good and sent as the build precompressed them (.br, .gz
// beside each, written by apps/web/vite.config.ts), chosen by Accept-Encoding.
import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { Router, type Request, type Response } from "express";
import { JsonableError } from "@chat/core";
import { browserSessionActor, endpoint, limitByIp, route, serve } from "@chat/http";
import { logger } from "@chat/logger";
import { html, sendPage } from "./pages.ts";
import type { ApiServices } from "./services.ts";

/** The page's policy: nothing inline, nothing from another origin but the avatars the server names (Gravatar's, as Zulip's default avatars). */
export const WEB_CLIENT_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob: https://secure.gravatar.com; media-src 'self' blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** Vite names what it emits under assets/ by content hash: a URL there never changes its bytes. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** Anything else the build copies (apps/web/public) keeps its name across releases. */
const REVALIDATE = "no-cache";

/**
 * The types served, by extension; a file of any other kind in dist is not served. No JSON: data
 * the client loads later is a module it imports, and a JSON file would pass for an API answer.
 */
const TYPES: Record<string, { type: string; compressible: boolean }> = {
  ".js": { type: "text/javascript; charset=utf-8", compressible: true },
  ".css": { type: "text/css; charset=utf-8", compressible: true },
  ".svg": { type: "image/svg+xml", compressible: true },
  ".txt": { type: "text/plain; charset=utf-8", compressible: true },
  ".png": { type: "image/png", compressible: false },
  ".webp": { type: "image/webp", compressible: false },
  ".ico": { type: "image/x-icon", compressible: false },
  ".woff2": { type: "font/woff2", compressible: false },
  ".ogg": { type: "audio/ogg", compressible: false },
  ".mp3": { type: "audio/mpeg", compressible: false },
};

/** The precompressed copies, in the order preferred when the client takes both equally. */
const ENCODINGS = [
  { name: "br", suffix: ".br" },
  { name: "gzip", suffix: ".gz" },
] as const;
type Encoding = (typeof ENCODINGS)[number]["name"];

/** One name in a served path: no dot file, no `..`, nothing a URL would need to escape. */
const SAFE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}$/;

interface WebFile {
  file: string;
  type: string;
  cacheControl: string;
  /** The precompressed copies the build wrote beside it (compressible types only). */
  variants: Partial<Record<Encoding, string>>;
  compressible: boolean;
}

export interface WebClientBuild {
  /** apps/web/dist. */
  dir: string;
  /** index.html as the build wrote it; null when the client is not built. */
  index: Buffer | null;
  /** Files under /static/web/, by their path there (`assets/index-3f2a.js`). */
  files: Map<string, WebFile>;
}

/** apps/web/dist of the checkout this code runs from (sources, or the bundle under apps/server/dist). */
export function webClientDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const web = path.join(dir, "apps", "web");
    if (statSync(path.join(web, "package.json"), { throwIfNoEntry: false })?.isFile()) return path.join(web, "dist");
    if (path.dirname(dir) === dir) return path.resolve("apps", "web", "dist");
  }
}

/** Reads what the build wrote in `dir`: index.html and every file it may serve. */
export function readWebClientBuild(dir: string = webClientDir()): WebClientBuild {
  const files = new Map<string, WebFile>();
  let index: Buffer | null = null;
  try {
    index = readFileSync(path.join(dir, "index.html"));
  } catch {
    return { dir, index: null, files };
  }
  const visit = (relative: string[]) => {
    const here = path.join(dir, ...relative);
    const names = new Set(readdirSync(here));
    for (const name of names) {
      if (!SAFE_NAME.test(name)) continue;
      const full = path.join(here, name);
      // lstat: a link in dist could point anywhere; the build writes none.
      const stat = lstatSync(full);
      if (stat.isDirectory()) {
        visit([...relative, name]);
        continue;
      }
      if (!stat.isFile()) continue;
      const kind = TYPES[path.extname(name).toLowerCase()];
      // index.html is the page at `/`, with its policy and only for a signed-in browser.
      if (!kind || (relative.length === 0 && name === "index.html")) continue;
      const variants: Partial<Record<Encoding, string>> = {};
      if (kind.compressible) {
        for (const { name: encoding, suffix } of ENCODINGS) if (names.has(name + suffix)) variants[encoding] = full + suffix;
      }
      files.set([...relative, name].join("/"), {
        file: full,
        type: kind.type,
        cacheControl: relative[0] === "assets" ? IMMUTABLE : REVALIDATE,
        variants,
        compressible: kind.compressible,
      });
    }
  };
  try {
    visit([]);
  } catch (error) {
    // dist replaced while being read (a build finishing as the server starts): serve what was listed.
    logger.warn("the web client's files could not all be listed", { dir, error: error instanceof Error ? error.message : String(error) });
  }
  return { dir, index, files };
}

/**
 * The precompressed copy to send: the encoding the client weighs highest (q > 0) among those the
 * file has, br on a tie; null for the file as it is. Not listed, and no `*`, means not accepted.
 */
export function chooseEncoding(acceptEncoding: string | undefined, available: readonly Encoding[]): Encoding | null {
  if (!acceptEncoding || available.length === 0) return null;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [rawName, ...params] = part.split(";");
    const name = rawName.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split("=").map((text) => text.trim().toLowerCase());
      if (key === "q") q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value ?? "") ? Number(value) : 0;
    }
    weights.set(name === "x-gzip" ? "gzip" : name, q);
  }
  let best: Encoding | null = null;
  let bestQ = 0;
  for (const { name } of ENCODINGS) {
    if (!available.includes(name)) continue;
    const q = weights.get(name) ?? weights.get("*") ?? 0;
    if (q > bestQ) {
      best = name;
      bestQ = q;
    }
  }
  return best;
}

const notFound = () => new JsonableError("File not found.", { status: 404 });

export const webClientEndpoints = {
  page: endpoint({
    method: "get",
    root: true,
    path: "/",
    tag: "web",
    auth: "none",
    summary: "The web client's page, for a signed-in browser",
    description:
      "The web client's index.html, to a browser with a session (its `sessionid` cookie); any other request goes to the login page. Never cached without asking again (`no-cache`); a strict Content-Security-Policy (no inline script or style, nothing from another origin). 503 while the web client is not built.",
    params: {},
    response: { html: "The web client's page." },
    redirects: { 302: "No session: to the login page (`/login`)." },
    htmlStatuses: [503],
  }),
  file: endpoint({
    method: "get",
    root: true,
    path: "/static/web/{path}",
    pathParams: { path: { schema: { type: "string" }, description: "The file's path in the build (`assets/index-3f2a9c.js`).", rest: true } },
    tag: "web",
    auth: "none",
    summary: "A file of the web client",
    description:
      "What the web client's build wrote. Under `assets/` names carry a hash of the content: cached for a year, immutable. Scripts, styles and other text are sent precompressed (Brotli or gzip) when Accept-Encoding takes it (`Vary: Accept-Encoding`).",
    params: {},
    response: { binary: [...new Set(Object.values(TYPES).map(({ type }) => type.split(";")[0]))] },
  }),
};

function setCommonHeaders(res: Response): void {
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
}

/** The page and the files, from `build` (read at start: readWebClientBuild). */
export function webClientRoutes(services: ApiServices, build: WebClientBuild = readWebClientBuild()): Router {
  const router = Router();
  if (build.index === null) {
    logger.warn("the web client is not built: `/` answers 503 until it is (npm run build, or `cd apps/web && npx vite build`, then restart)", { dir: build.dir });
  }
  const sessionOptions = { prisma: services.prisma, externalHost: services.ctx.externalHost };

  serve(
    router,
    webClientEndpoints.page,
    // A session is looked up in the database: counted per address like every request without credentials.
    limitByIp(services.rateLimits),
    route(async (req, res) => {
      const index = build.index;
      if (index === null) {
        sendPage(res, 503, {
          title: "The web client is not built",
          body: html`<p>This server has no web client to serve yet. Its operator can build it with <code>npm run build</code> (or <code>cd apps/web &amp;&amp; npx vite build</code>) and restart the server.</p>
<p>The API (<code>/api/v1/</code>) works meanwhile.</p>`,
        });
        return;
      }
      setCommonHeaders(res);
      const actor = await browserSessionActor(req, sessionOptions);
      if (!actor) {
        // Nothing of the request goes into the URL (the hash never reaches the server anyway).
        res.status(302).set({ Location: "/login", "Cache-Control": "no-store", "Content-Length": "0" }).end();
        return;
      }
      res.status(200).set({
        "Content-Type": "text/html; charset=utf-8",
        "Content-Length": String(index.length),
        "Cache-Control": REVALIDATE,
        "Content-Security-Policy": WEB_CLIENT_CSP,
      });
      res.end(req.method === "HEAD" ? undefined : index);
    }),
  );

  serve(
    router,
    webClientEndpoints.file,
    route(async (req, res) => {
      // Express gives the rest of the path as its decoded segments: looked up whole, never joined to a directory.
      const segments = req.params.path as unknown;
      const key = Array.isArray(segments) ? segments.join("/") : String(segments);
      const entry = build.files.get(key);
      if (!entry) throw notFound();
      await sendWebFile(req, res, entry);
    }),
  );
  return router;
}

async function sendWebFile(req: Request, res: Response, entry: WebFile): Promise<void> {
  const encoding = chooseEncoding(req.headers["accept-encoding"], Object.keys(entry.variants) as Encoding[]);
  const file = encoding ? entry.variants[encoding]! : entry.file;
  // Opened before any header: a file gone since start (a rebuild) is a 404, and its length is the open file's.
  const handle = await open(file).catch(() => null);
  if (!handle) throw notFound();
  let streaming = false;
  try {
    const { size } = await handle.stat();
    res.status(200);
    setCommonHeaders(res);
    res.setHeader("Content-Type", entry.type);
    res.setHeader("Content-Length", String(size));
    res.setHeader("Cache-Control", entry.cacheControl);
    if (entry.compressible) res.setHeader("Vary", "Accept-Encoding");
    if (encoding) res.setHeader("Content-Encoding", encoding);
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    streaming = true;
    const stream = handle.createReadStream();
    await new Promise<void>((resolve) => {
      stream.on("error", () => {
        // Headers are out: all that can be done is to cut the body off.
        res.destroy();
        resolve();
      });
      res.on("close", () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res);
    });
  } finally {
    // The stream closes the handle itself once it has it.
    if (!streaming) await handle.close();
  }
}
