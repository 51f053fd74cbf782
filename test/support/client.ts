// Requests the way Zulip clients send them: HTTP Basic, form-encoded bodies, non-string
// parameters JSON-encoded, over real HTTP (supertest against a listening server).
import request from "supertest";
import { checkResponse } from "./openapi.ts";

export type Params = Record<string, unknown>;

export interface ApiResponse {
  status: number;
  body: Record<string, any>;
  headers: Record<string, string>;
}

export function encodeParams(params: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    out[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return out;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly credentials: { email: string; apiKey: string } | null,
    readonly host?: string,
  ) {}

  private prepare(test: request.Test): request.Test {
    if (this.credentials) test = test.auth(this.credentials.email, this.credentials.apiKey);
    if (this.host) test = test.set("Host", this.host);
    return test;
  }

  /** Sends, and checks the response against the API document (support/openapi.ts). */
  private async send(method: string, path: string, test: request.Test): Promise<ApiResponse> {
    const res = await test;
    checkResponse(method, `/api/v1${path}`, res.status, res.body, res.headers["content-type"]);
    return { status: res.status, body: res.body, headers: res.headers as Record<string, string> };
  }

  get(path: string, params: Params = {}): Promise<ApiResponse> {
    return this.send("get", path, this.prepare(request(this.baseUrl).get(`/api/v1${path}`).query(encodeParams(params))));
  }

  post(path: string, params: Params = {}): Promise<ApiResponse> {
    return this.send("post", path, this.prepare(request(this.baseUrl).post(`/api/v1${path}`).type("form").send(encodeParams(params))));
  }

  patch(path: string, params: Params = {}): Promise<ApiResponse> {
    return this.send("patch", path, this.prepare(request(this.baseUrl).patch(`/api/v1${path}`).type("form").send(encodeParams(params))));
  }

  put(path: string, params: Params = {}): Promise<ApiResponse> {
    return this.send("put", path, this.prepare(request(this.baseUrl).put(`/api/v1${path}`).type("form").send(encodeParams(params))));
  }

  delete(path: string, params: Params = {}): Promise<ApiResponse> {
    return this.send("delete", path, this.prepare(request(this.baseUrl).delete(`/api/v1${path}`).type("form").send(encodeParams(params))));
  }

  /**
   * A raw supertest request with this client's credentials, for bodies the helpers do not make.
   * Its response is checked against the API document too, when awaited.
   */
  raw(method: "get" | "post" | "patch" | "put" | "delete", path: string): request.Test {
    const test = this.prepare(request(this.baseUrl)[method](`/api/v1${path}`));
    const then = test.then.bind(test);
    test.then = ((resolve, reject) =>
      then((res) => {
        checkResponse(method, `/api/v1${path}`, res.status, res.body, res.headers["content-type"]);
        return res;
      }).then(resolve, reject)) as typeof test.then;
    return test;
  }
}
