// zulip-js fetches through isomorphic-fetch (node-fetch 2), not the global fetch that
// check-all-responses.ts checks. A test file driving it checks its answers too with
//   jest.mock("isomorphic-fetch", () => jest.requireActual("../support/checked-node-fetch.ts").checkedNodeFetch);
// so the client still sends its requests through its own HTTP stack, unmodified.
import { checkFetchedResponse } from "./check-all-responses.ts";

/** The part of node-fetch 2's Response used here (the package ships no types). */
interface NodeFetchResponse {
  status: number;
  statusText: string;
  url: string;
  headers: { get(name: string): string | null };
  buffer(): Promise<Buffer>;
}

type NodeFetch = (url: string, init?: { method?: string }) => Promise<NodeFetchResponse>;
type NodeFetchResponseClass = new (body: Buffer, init: Pick<NodeFetchResponse, "status" | "statusText" | "headers" | "url">) => NodeFetchResponse;

const isomorphicFetch = jest.requireActual<NodeFetch>("isomorphic-fetch");
const { Response } = jest.requireActual<{ Response: NodeFetchResponseClass }>("node-fetch");

/** isomorphic-fetch, checking each answer against the API document before the client reads it. */
export async function checkedNodeFetch(url: string, init?: { method?: string }): Promise<NodeFetchResponse> {
  const res = await isomorphicFetch(url, init);
  // node-fetch 2's clone() stalls on a body larger than its stream buffers until the original is
  // read, so the body is read once here and handed on in a new Response.
  const bytes = await res.buffer();
  const contentType = res.headers.get("content-type") ?? undefined;
  await checkFetchedResponse(init?.method ?? "GET", new URL(url), res.status, contentType, async () => JSON.parse(bytes.toString("utf8")));
  return new Response(bytes, { status: res.status, statusText: res.statusText, headers: res.headers, url: res.url });
}
