// X-Forwarded-* are believed only from TRUSTED_PROXIES (loopback by default), and even then only
// values we could have served: realm_uri never carries a scheme a client sent, and the client
// address the rate limits count is the connection's unless a trusted proxy names another.
import { MODES, startTestServer, type TestServer } from "../support/server.ts";

async function realmUris(server: TestServer, headers: Record<string, string>): Promise<string[]> {
  let settings = server.anonymous.raw("get", "/server_settings");
  let register = server.owner.raw("post", "/register").type("form").send({ event_types: JSON.stringify(["realm"]) });
  for (const [name, value] of Object.entries(headers)) {
    settings = settings.set(name, value);
    register = register.set(name, value);
  }
  const [fromSettings, fromRegister] = await Promise.all([settings, register]);
  expect(fromSettings.status).toBe(200);
  expect(fromRegister.status).toBe(200);
  return [fromSettings.body.realm_uri, fromRegister.body.realm_uri];
}

describe.each(MODES)("forwarded headers from the default trusted proxy, loopback (%s)", (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(mode);
  });
  afterAll(() => server.stop());

  test("a forwarded scheme that is not http or https never reaches realm_uri", async () => {
    for (const proto of ["javascript", "javascript, https", "HTTPS:", "data"]) {
      expect(await realmUris(server, { "X-Forwarded-Proto": proto })).toEqual(["http://chat.test", "http://chat.test"]);
    }
  });

  test("a forwarded https is honoured", async () => {
    expect(await realmUris(server, { "X-Forwarded-Proto": "https" })).toEqual(["https://chat.test", "https://chat.test"]);
    expect(await realmUris(server, { "X-Forwarded-Proto": "HTTPS, http" })).toEqual(["https://chat.test", "https://chat.test"]);
    expect(await realmUris(server, {})).toEqual(["http://chat.test", "http://chat.test"]);
  });
});

describe.each(MODES)("forwarded headers from an address TRUSTED_PROXIES does not name (%s)", (mode) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(mode, { TRUSTED_PROXIES: "10.1.2.3, 192.168.0.0/16", RATE_LIMITING: "true", RATE_LIMIT_IP_REQUESTS_PER_MINUTE: "3" });
  });
  afterAll(() => server.stop());

  test("X-Forwarded-Proto is ignored", async () => {
    expect(await realmUris(server, { "X-Forwarded-Proto": "https" })).toEqual(["http://chat.test", "http://chat.test"]);
  });

  test("X-Forwarded-For is ignored: the rate limit counts the connection's address", async () => {
    // Four addresses claimed, one address counted (3 a minute): the fourth request is over the limit.
    const statuses: number[] = [];
    for (const ip of ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"]) {
      statuses.push((await server.anonymous.raw("get", "/server_settings").set("X-Forwarded-For", ip)).status);
    }
    expect(statuses[3]).toBe(429);
  });
});
