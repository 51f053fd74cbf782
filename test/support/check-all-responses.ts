// Jest setup (setupFilesAfterEnv): the responses tests read without ApiClient are checked against
// the API document too (support/openapi.ts), so no shape escapes it: every supertest request, and
// every fetch of this server's paths on loopback (the API, files, health). Clients with an HTTP
// stack of their own are checked through checkFetchedResponse (zulip-js: checked-node-fetch.ts).
import supertest from "supertest";
import { checkResponse } from "./openapi.ts";

type Checked = { method?: string; url?: string };

let checking = true;

/**
 * For a test file whose servers are not this API (an app of its own with made-up routes, to test
 * the HTTP layer): its responses are not the document's to judge.
 */
export function responsesOutsideTheApiDocument(): void {
  checking = false;
}

const testPrototype = (supertest as unknown as { Test: { prototype: { then: (...args: unknown[]) => Promise<unknown> } } }).Test.prototype;
const superagentThen = testPrototype.then;
testPrototype.then = function checkedThen(this: Checked, resolve?: unknown, reject?: unknown) {
  const request = this;
  return superagentThen.call(this, (res: { status: number; body: unknown; headers: Record<string, string> }) => {
    if (checking && request.method !== undefined && request.url !== undefined) {
      const url = new URL(request.url);
      checkResponse(request.method, `${url.pathname}${url.search}`, res.status, res.body, res.headers["content-type"]);
    }
    return res;
  }).then(resolve as never, reject as never);
};

/** This server's paths: anything else on loopback (a webhook receiver, S3, /metrics) is not described. */
const SERVED = /^\/(api\/v1\/|user_uploads\/|user_avatars\/|health\/|static\/)/;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Checks an answer fetched from `url` if it is this server's (loopback, a served path); only a JSON
 * body is read (`readJson`), a download is the test's to read.
 */
export async function checkFetchedResponse(method: string, url: URL, status: number, contentType: string | undefined, readJson: () => Promise<unknown>): Promise<void> {
  if (!checking || !LOOPBACK.has(url.hostname) || !SERVED.test(url.pathname)) return;
  const body = contentType?.includes("json") ? await readJson().catch(() => undefined) : undefined;
  checkResponse(method, `${url.pathname}${url.search}`, status, body, contentType);
}

const plainFetch = globalThis.fetch;
globalThis.fetch = async function checkedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await plainFetch(input, init);
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = init?.method ?? (input instanceof Request ? input.method : "GET");
  // A clone is read, so the test gets the body intact.
  await checkFetchedResponse(method, url, res.status, res.headers.get("content-type") ?? undefined, () => res.clone().json());
  return res;
} as typeof fetch;
