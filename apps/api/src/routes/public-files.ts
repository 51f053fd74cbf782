// Files anyone may fetch, without credentials, as Zulip's nginx serves them: avatars and custom
// emoji under /user_avatars (from storage), and the server's icon under /static. Every path
// segment is checked against a strict pattern and the storage key is built from the checked
// parts alone, so no client text reaches storage as it was sent.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Router, type Request, type Response } from "express";
import { avatarStorageKeys, customEmojiStorageKey, fitsPostgresInteger, SERVER_EMOJI_DATA_PATH, unicodeEmojiNamesByCode } from "@chat/core";
import { endpoint, route, schema, serve } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { fileNotFound, streamStoredBody } from "./stored-files.ts";

/** Avatar and emoji URLs change when the image does (`?version=N`, a new emoji id): cache them long. */
const CACHE_VERSIONED = "public, max-age=31536000";
/** The icon's URL never changes; a day lets a new release's icon show. */
const CACHE_STATIC = "public, max-age=86400";

const ID = /^[1-9][0-9]{0,9}$/;
/** `<user_id>.png` or `<user_id>-medium.png`; the `.original` beside them is never served. */
const AVATAR_FILE = /^([1-9][0-9]{0,9})(-medium)?\.png$/;
/** `<emoji_id>.png|gif` as the server names them; older rows may carry a name of their own. */
const EMOJI_FILE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}\.(png|gif|jpg|jpeg|webp)$/;
const EMOJI_TYPES: Record<string, string> = { png: "image/png", gif: "image/gif", jpg: "image/jpeg", jpeg: "image/jpeg", webp: "image/webp" };

const notFound = fileNotFound;

function realmIdOf(req: Request): number {
  const raw = String(req.params.realm_id);
  if (!ID.test(raw) || !fitsPostgresInteger(raw)) throw notFound();
  return Number(raw);
}

/** apps/api/static of the checkout this code runs from (sources, or a bundle under apps/server/dist). */
function staticDir(): string | null {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "apps", "api", "static");
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

function setFileHeaders(res: Response, contentType: string, cacheControl: string, size: number): void {
  res.status(200);
  res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", String(size));
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", cacheControl);
}

const REALM_ID = { realm_id: { schema: { type: "string", pattern: "^[1-9][0-9]{0,9}$" }, description: "The organization's id." } };

export const publicFileEndpoints = {
  avatar: endpoint({
    method: "get",
    root: true,
    path: "/user_avatars/{realm_id}/{file}",
    pathParams: { ...REALM_ID, file: { schema: { type: "string", pattern: AVATAR_FILE.source }, description: "`<user_id>.png`, or `<user_id>-medium.png`." } },
    tag: "files",
    auth: "none",
    summary: "A user's uploaded avatar",
    params: {},
    response: { binary: ["image/png"] },
  }),
  emoji: endpoint({
    method: "get",
    root: true,
    path: "/user_avatars/{realm_id}/emoji/images/{file}",
    pathParams: { ...REALM_ID, file: { schema: { type: "string", pattern: EMOJI_FILE.source }, description: "The emoji's file, as its `source_url` names it." } },
    tag: "files",
    auth: "none",
    summary: "A custom emoji's image",
    params: {},
    response: { binary: Object.values(EMOJI_TYPES) },
  }),
  icon: endpoint({
    method: "get",
    root: true,
    path: "/static/images/logo/zulip-icon-128x128.png",
    tag: "files",
    auth: "none",
    summary: "The organization icon /server_settings names",
    params: {},
    response: { binary: ["image/png"] },
  }),
  // The avatar of a user a guest may not see ("Unknown user", feature level 232), at Zulip's path.
  unknownUserAvatar: endpoint({
    method: "get",
    root: true,
    path: "/static/images/unknown-user-avatar.png",
    tag: "files",
    auth: "none",
    summary: "The avatar shown for a user one may not see",
    params: {},
    response: { binary: ["image/png"] },
  }),
  // Zulip's server_emoji_data_url (feature level 140): zulip-flutter fetches it after /register.
  emojiData: endpoint({
    method: "get",
    root: true,
    path: SERVER_EMOJI_DATA_PATH,
    tag: "files",
    auth: "none",
    summary: "The names of the server's Unicode emoji by code, the canonical name first (`server_emoji_data_url`)",
    params: {},
    response: schema.object({ code_to_names: schema.dict(schema.array(schema.string())) }),
  }),
};

/** The emoji names document, built on first use: it changes only with the server's release. */
let emojiData: Buffer | null = null;

export function publicFileRoutes(services: ApiServices): Router {
  const router = Router();
  const { storage } = services;

  /** Sends the object at `key` (built by the caller from checked parts) as `contentType`, or 404. */
  async function sendStored(req: Request, res: Response, key: string, contentType: string): Promise<void> {
    const object = await storage.get(key);
    if (!object) throw notFound();
    setFileHeaders(res, contentType, CACHE_VERSIONED, object.size);
    await streamStoredBody(req, res, object, key);
  }

  serve(
    router,
    publicFileEndpoints.avatar,
    route(async (req, res) => {
      const realmId = realmIdOf(req);
      const match = AVATAR_FILE.exec(String(req.params.file));
      if (!match || !fitsPostgresInteger(match[1])) throw notFound();
      const keys = avatarStorageKeys(realmId, Number(match[1]));
      await sendStored(req, res, match[2] ? keys.medium : keys.small, "image/png");
    }),
  );

  serve(
    router,
    publicFileEndpoints.emoji,
    route(async (req, res) => {
      const realmId = realmIdOf(req);
      const file = String(req.params.file);
      const match = EMOJI_FILE.exec(file);
      if (!match) throw notFound();
      await sendStored(req, res, customEmojiStorageKey(realmId, file), EMOJI_TYPES[match[1]]);
    }),
  );

  // The realm_icon /server_settings names, and the default organization icon: our own image.
  let icon: Promise<Buffer | null> | null = null;
  serve(
    router,
    publicFileEndpoints.icon,
    route(async (req, res) => {
      icon ??= (async () => {
        const dir = staticDir();
        return dir === null ? null : readFile(path.join(dir, "images", "logo", "zulip-icon-128x128.png"));
      })().catch(() => null);
      const data = await icon;
      if (!data) throw notFound();
      setFileHeaders(res, "image/png", CACHE_STATIC, data.length);
      res.end(req.method === "HEAD" ? undefined : data);
    }),
  );

  let unknownAvatar: Promise<Buffer | null> | null = null;
  serve(
    router,
    publicFileEndpoints.unknownUserAvatar,
    route(async (req, res) => {
      unknownAvatar ??= (async () => {
        const dir = staticDir();
        return dir === null ? null : readFile(path.join(dir, "images", "unknown-user-avatar.png"));
      })().catch(() => null);
      const data = await unknownAvatar;
      if (!data) throw notFound();
      setFileHeaders(res, "image/png", CACHE_STATIC, data.length);
      res.end(req.method === "HEAD" ? undefined : data);
    }),
  );

  serve(router, publicFileEndpoints.emojiData, (req, res) => {
    emojiData ??= Buffer.from(JSON.stringify({ code_to_names: unicodeEmojiNamesByCode() }));
    setFileHeaders(res, "application/json; charset=utf-8", CACHE_STATIC, emojiData.length);
    res.end(req.method === "HEAD" ? undefined : emojiData);
  });
  return router;
}
