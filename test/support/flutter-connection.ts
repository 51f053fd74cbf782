// Requests exactly as zulip-flutter's ApiConnection makes them (lib/api/core.dart): HTTP Basic,
// GET parameters in the query, POST/PATCH/DELETE parameters form-encoded, uploads as multipart
// `file`, and every parameter value JSON-encoded unless the binding wraps it in RawParameter
// (`encodeParameters`), so a plain string goes out quoted (`"mobile"`).
import request from "supertest";

/** flutter's RawParameter: sent as it is. */
export class RawParameter {
  constructor(readonly value: string) {}
}

export const raw = (value: string | number) => new RawParameter(String(value));

/** The client capabilities zulip-flutter declares to /register (lib/api/route/events.dart). */
export const FLUTTER_CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: true,
  stream_typing_notifications: true,
  user_settings_object: true,
  include_deactivated_groups: true,
  empty_topic_name: true,
  individual_emoji_changes: true,
} as const;

export type FlutterParams = Record<string, unknown>;

export function encodeFlutterParameters(params: FlutterParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue; // `'key': ?value` leaves the key out
    out[key] = value instanceof RawParameter ? value.value : JSON.stringify(value);
  }
  return out;
}

export interface FlutterResponse {
  status: number;
  /** The body decoded as the app does, `jsonDecode(utf8.decode(bytes))` whatever the content type; null if that fails. */
  body: unknown;
}

function decodeBody(res: request.Response): unknown {
  const text = typeof res.text === "string" ? res.text : Buffer.isBuffer(res.body) ? res.body.toString("utf8") : null;
  if (text === null) return res.body;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The User-Agent the app sends (lib/api/core.dart `userAgentHeader`). */
const USER_AGENT = "ZulipFlutter/30.0.264+264 (Android 14)";

export class FlutterConnection {
  constructor(
    readonly baseUrl: string,
    readonly credentials: { email: string; apiKey: string } | null,
  ) {}

  private async send(test: request.Test): Promise<FlutterResponse> {
    test = test.set("User-Agent", USER_AGENT);
    if (this.credentials) test = test.auth(this.credentials.email, this.credentials.apiKey);
    const res = await test;
    return { status: res.status, body: decodeBody(res) };
  }

  get(path: string, params: FlutterParams | null = {}): Promise<FlutterResponse> {
    const test = request(this.baseUrl).get(`/api/v1/${path}`);
    return this.send(params ? test.query(encodeFlutterParameters(params)) : test);
  }

  post(path: string, params: FlutterParams = {}): Promise<FlutterResponse> {
    return this.send(request(this.baseUrl).post(`/api/v1/${path}`).type("form").send(encodeFlutterParameters(params)));
  }

  patch(path: string, params: FlutterParams = {}): Promise<FlutterResponse> {
    return this.send(request(this.baseUrl).patch(`/api/v1/${path}`).type("form").send(encodeFlutterParameters(params)));
  }

  delete(path: string, params: FlutterParams = {}): Promise<FlutterResponse> {
    return this.send(request(this.baseUrl).delete(`/api/v1/${path}`).type("form").send(encodeFlutterParameters(params)));
  }

  /** `postFileFromStream`: one multipart part named `file`. */
  upload(path: string, filename: string, content: Buffer, contentType: string): Promise<FlutterResponse> {
    return this.send(request(this.baseUrl).post(`/api/v1/${path}`).attach("file", content, { filename, contentType }));
  }

  /** `fetchServerEmojiData`: a plain GET of a URL from /register, without credentials. */
  async fetchUnauthenticated(url: string): Promise<FlutterResponse> {
    const target = new URL(url, this.baseUrl);
    const local = new URL(this.baseUrl);
    let test = request(this.baseUrl).get(`${target.pathname}${target.search}`).set("User-Agent", USER_AGENT);
    // An absolute URL names the realm's public host; this server answers on loopback.
    if (target.host !== local.host) test = test.set("Host", target.host);
    const res = await test.buffer(true);
    return { status: res.status, body: decodeBody(res) };
  }
}
