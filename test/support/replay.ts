// Replays requests recorded from real Zulip clients (test/clients/recordings/*.json) as those
// clients encoded them, and checks the response fields each client reads. A recording names values
// that differ between runs with placeholders ("{{alice.id}}", "{{queue}}"): the harness fills them
// from the users it creates and from what earlier steps captured, so steps can depend on each other.
import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { checkResponse } from "./openapi.ts";

/**
 * Paths into a response: `a.b`, `a[0]`, `a[*]` (every element, or every value of an object), `a["key.with.dots"]`.
 * Types: string, number, integer, boolean, array, object, null, any (present), array+ (non-empty),
 * absent (the client reads it with .get()); unions with "|".
 */
export interface Checks {
  status?: number;
  types?: Record<string, string>;
  /** Values the client depends on; a string that is a single placeholder stands for the typed value. */
  equals?: Record<string, unknown>;
  startsWith?: Record<string, string>;
  /** The value must be among those the path resolves to; "a|b" pools the values of several paths. */
  includes?: Record<string, unknown>;
}

export interface EventExpectation extends Omit<Checks, "status"> {
  /** Picks the event: every path must hold this value. */
  where: Record<string, unknown>;
  capture?: Record<string, string>;
}

export interface Step {
  description: string;
  /** Whose credentials go in the Basic header (scope `<as>.email`, `<as>.key`); null sends none. */
  as: string | null;
  /** Not the recorded client: another user's action that the client then observes. */
  scenario?: boolean;
  userAgent?: string;
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  path: string;
  query?: Array<[string, string]>;
  contentType?: "application/x-www-form-urlencoded" | "multipart/form-data";
  form?: Array<[string, string]>;
  /** File parts; `base64` content for binary files (images), else the text itself. */
  files?: Array<{ field: string; filename: string; content: string; encoding?: "base64" }>;
  expect: Checks;
  /** Scope name → response path. */
  capture?: Record<string, string>;
  /**
   * For GET /events: the events the client goes on to read. The request is repeated as the client
   * repeats it (last_event_id advanced to the newest event seen) until each has arrived.
   */
  events?: EventExpectation[];
}

export interface Recording {
  client: string;
  recordedWith: string;
  userAgent: string;
  notes: string[];
  steps: Step[];
}

export type Scope = Map<string, unknown>;

const PLACEHOLDER = /\{\{([^}]+)\}\}/g;
const EVENT_WAIT_MS = 10_000;

class MissingValue extends Error {}

function lookup(scope: Scope, name: string): unknown {
  if (!scope.has(name)) throw new MissingValue(`no value for {{${name}}}: the step that captures it failed`);
  return scope.get(name);
}

export function fill(template: string, scope: Scope): string {
  return template.replace(PLACEHOLDER, (_, name: string) => String(lookup(scope, name)));
}

/** Like fill, but "{{x}}" alone keeps x's type, so `"message.id": "{{msg}}"` compares as a number. */
function fillValue(value: unknown, scope: Scope): unknown {
  if (typeof value === "string") {
    const only = /^\{\{([^}]+)\}\}$/.exec(value);
    return only ? lookup(scope, only[1]) : fill(value, scope);
  }
  if (Array.isArray(value)) return value.map((v) => fillValue(v, scope));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillValue(v, scope)]));
  }
  return value;
}

interface Resolved {
  values: unknown[];
  /** The first prefix of the path that is not there. */
  missing: string | null;
}

function resolve(root: unknown, path: string): Resolved {
  const tokens = path.match(/\[\*\]|\[\d+\]|\["[^"]*"\]|[^.[\]]+/g) ?? [];
  let current: unknown[] = [root];
  let walked = "";
  for (const token of tokens) {
    const next: unknown[] = [];
    for (const value of current) {
      if (token === "[*]") {
        // Every element of an array, or every value of a dict keyed by id (realm_emoji).
        if (Array.isArray(value)) next.push(...value);
        else if (value !== null && typeof value === "object") next.push(...Object.values(value));
        else return { values: [], missing: `${walked} (not an array or object)` };
        continue;
      }
      const key = token.startsWith('["') ? token.slice(2, -2) : token.startsWith("[") ? Number(token.slice(1, -1)) : token;
      if (value === null || typeof value !== "object" || !(key in value)) return { values: [], missing: walked + (walked ? "." : "") + token };
      next.push((value as Record<string | number, unknown>)[key]);
    }
    walked += token.startsWith("[") ? token : (walked ? "." : "") + token;
    current = next;
  }
  return { values: current, missing: null };
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value: unknown, spec: string): boolean {
  return spec.split("|").some((type) => {
    switch (type) {
      case "any":
        return true;
      case "integer":
        return Number.isInteger(value);
      case "array+":
        return Array.isArray(value) && value.length > 0;
      default:
        return typeName(value) === type;
    }
  });
}

function show(value: unknown, limit = 300): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/** An event for an error message: a message event shows only its message's id. */
function brief(event: Record<string, unknown>): unknown {
  const message = event.message;
  return message !== null && typeof message === "object" && "id" in message ? { ...event, message: { id: message.id } } : event;
}

function check(root: unknown, checks: Omit<Checks, "status">, scope: Scope, label: string): string[] {
  const problems: string[] = [];
  const absent = new Set<string>();
  // Resolves a path (placeholders filled); a missing part is reported once, not for every path under it.
  const lookupPath = (template: string, wants: string): { path: string; values: unknown[] } | null => {
    const path = fill(template, scope);
    const { values, missing } = resolve(root, path);
    if (missing === null) return { path, values };
    if (wants !== "" && ![...absent].some((prefix) => missing.startsWith(prefix))) {
      absent.add(missing);
      problems.push(`${label}.${missing}: missing, client expects ${wants}${missing === path ? "" : ` at ${path}`}`);
    }
    return null;
  };
  for (const [template, spec] of Object.entries(checks.types ?? {})) {
    const found = lookupPath(template, spec.split("|").includes("absent") ? "" : spec);
    for (const value of found?.values ?? []) {
      if (!hasType(value, spec)) problems.push(`${label}.${found!.path}: expected ${spec}, got ${show(value)}`);
    }
  }
  for (const [template, expected] of Object.entries(checks.equals ?? {})) {
    const want = fillValue(expected, scope);
    const found = lookupPath(template, show(want));
    for (const value of found?.values ?? []) {
      if (!isDeepStrictEqual(value, want)) problems.push(`${label}.${found!.path}: expected ${show(want)}, got ${show(value)}`);
    }
  }
  for (const [template, prefix] of Object.entries(checks.startsWith ?? {})) {
    const want = fill(prefix, scope);
    const found = lookupPath(template, `a string starting with ${show(want)}`);
    for (const value of found?.values ?? []) {
      if (typeof value !== "string" || !value.startsWith(want)) problems.push(`${label}.${found!.path}: expected to start with ${show(want)}, got ${show(value)}`);
    }
  }
  for (const [templates, expected] of Object.entries(checks.includes ?? {})) {
    const want = fillValue(expected, scope);
    const paths = fill(templates, scope);
    const pool = paths.split("|").flatMap((path) => resolve(root, path).values);
    if (!pool.some((value) => isDeepStrictEqual(value, want))) problems.push(`${label}.${paths}: ${show(want)} not among ${show(pool)}`);
  }
  return problems;
}

function captureInto(scope: Scope, root: unknown, capture: Record<string, string> | undefined): void {
  for (const [name, path] of Object.entries(capture ?? {})) {
    const { values, missing } = resolve(root, path);
    if (missing === null && values.length === 1) scope.set(name, values[0]);
  }
}

/** multipart/form-data as python-requests writes it for `files=[(name, file)]`: no part Content-Type. */
function multipartBody(files: NonNullable<Step["files"]>): { body: Buffer; contentType: string } {
  const boundary = randomBytes(16).toString("hex");
  const parts = files.map((f) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${f.filename}"\r\n\r\n`),
      Buffer.from(f.content, f.encoding === "base64" ? "base64" : "utf8"),
      Buffer.from("\r\n"),
    ]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

interface Reply {
  status: number;
  body: unknown;
}

async function send(baseUrl: string, recording: Recording, step: Step, scope: Scope): Promise<Reply> {
  const url = new URL(fill(step.path, scope), baseUrl);
  for (const [key, value] of step.query ?? []) url.searchParams.append(key, fill(value, scope));
  const headers: Record<string, string> = { "User-Agent": step.userAgent ?? recording.userAgent };
  if (step.as !== null) {
    const credentials = `${String(lookup(scope, `${step.as}.email`))}:${String(lookup(scope, `${step.as}.key`))}`;
    headers.Authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
  }
  let body: string | Buffer | undefined;
  if (step.contentType === "application/x-www-form-urlencoded") {
    body = new URLSearchParams((step.form ?? []).map(([k, v]): [string, string] => [k, fill(v, scope)])).toString();
    headers["Content-Type"] = step.contentType;
  } else if (step.contentType === "multipart/form-data") {
    const multipart = multipartBody(step.files ?? []);
    body = multipart.body;
    headers["Content-Type"] = multipart.contentType;
  }
  const res = await fetch(url, { method: step.method, headers, body, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  let reply: Reply;
  try {
    reply = { status: res.status, body: JSON.parse(text) };
  } catch {
    reply = { status: res.status, body: text };
  }
  // What a real client was answered must be what the API document says too.
  checkResponse(step.method, url.pathname, reply.status, reply.body, res.headers.get("content-type") ?? undefined);
  return reply;
}

function checkReply(reply: Reply, checks: Checks, scope: Scope): string[] {
  const problems = check(reply.body, checks, scope, "response");
  if (checks.status !== undefined && reply.status !== checks.status) problems.unshift(`status: expected ${checks.status}, got ${reply.status}`);
  return problems.length > 0 ? [...problems, `response: ${show(reply.body)}`] : [];
}

/** The scope name of a `last_event_id` given as "{{name}}": advanced as the client advances it. */
function lastEventIdName(step: Step): string | null {
  const template = step.query?.find(([key]) => key === "last_event_id")?.[1];
  const match = template ? /^\{\{([^}]+)\}\}$/.exec(template) : null;
  return match ? match[1] : null;
}

async function pollEvents(baseUrl: string, recording: Recording, step: Step, scope: Scope): Promise<string[]> {
  const expectations = step.events ?? [];
  const found = new Map<EventExpectation, Record<string, unknown>>();
  const seen: Array<Record<string, unknown>> = [];
  const counter = lastEventIdName(step);
  const deadline = Date.now() + EVENT_WAIT_MS;
  for (;;) {
    const reply = await send(baseUrl, recording, step, scope);
    const problems = checkReply(reply, step.expect, scope);
    if (problems.length > 0) return problems;
    const events = resolve(reply.body, "events[*]").values.filter((e): e is Record<string, unknown> => typeName(e) === "object");
    for (const event of events) {
      if (counter !== null && typeof event.id === "number") scope.set(counter, Math.max(Number(lookup(scope, counter)), event.id));
      if (event.type === "heartbeat") continue;
      seen.push(event);
      for (const expectation of expectations) {
        if (found.has(expectation)) continue;
        const where = fillValue(expectation.where, scope) as Record<string, unknown>;
        const matches = Object.entries(where).every(([path, want]) => resolve(event, path).values.some((v) => isDeepStrictEqual(v, want)));
        if (matches) found.set(expectation, event);
      }
    }
    if (found.size === expectations.length) break;
    if (Date.now() > deadline) {
      const waiting = expectations.filter((e) => !found.has(e)).map((e) => show(fillValue(e.where, scope)));
      return [`events: none matched ${waiting.join(", ")} within ${EVENT_WAIT_MS} ms; saw ${show(seen.map(brief), 2000)}`];
    }
  }
  const problems: string[] = [];
  for (const [expectation, event] of found) {
    captureInto(scope, event, expectation.capture);
    problems.push(...check(event, expectation, scope, `event ${String(event.type)}${event.op ? `/${String(event.op)}` : ""}`));
  }
  return problems;
}

/** Sends one step and returns what the client would trip over; empty when it would work. */
export async function replayStep(baseUrl: string, recording: Recording, step: Step, scope: Scope): Promise<string[]> {
  try {
    if (step.events) return await pollEvents(baseUrl, recording, step, scope);
    const reply = await send(baseUrl, recording, step, scope);
    // Capture before checking, so one wrong field does not also fail every later step.
    captureInto(scope, reply.body, step.capture);
    return checkReply(reply, step.expect, scope);
  } catch (error) {
    if (error instanceof MissingValue) return [error.message];
    throw error;
  }
}
