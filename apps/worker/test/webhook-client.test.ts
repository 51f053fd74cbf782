// The outgoing-webhook HTTP client against real receivers (plain Node servers on 127.0.0.1).
// Loopback is what a test can listen on, so most tests allow it (allowLoopback or allowedHosts)
// and the refusal tests show that without that allowance nothing reaches the receiver.
import dns from "node:dns";
import http from "node:http";
import net from "node:net";
import { DestinationPolicy, WebhookClient, WebhookRequestError, type WebhookClientOptions } from "../src/webhook-client.ts";

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  port: number;
  url(path?: string): string;
  /** TCP connections accepted. */
  connections: number;
  received: Received[];
  /** Server-side sockets still open. */
  sockets: Set<net.Socket>;
  server: http.Server;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

const receivers: Receiver[] = [];
const clients: WebhookClient[] = [];

afterEach(async () => {
  jest.restoreAllMocks();
  for (const client of clients.splice(0)) client.close();
  await Promise.all(
    receivers.splice(0).map(
      ({ server }) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

const replyJson: Handler = (_req, res) => {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ content: "pong" }));
};

/** A receiver that reads each request's body, records it, then calls `handle`. */
async function startReceiver(handle: Handler = replyJson): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  server.keepAliveTimeout = 60_000; // only the client closes idle connections
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  const receiver: Receiver = {
    port,
    url: (path = "/") => `http://127.0.0.1:${port}${path}`,
    connections: 0,
    received,
    sockets: new Set(),
    server,
  };
  server.on("connection", (socket: net.Socket) => {
    receiver.connections++;
    receiver.sockets.add(socket);
    socket.on("close", () => receiver.sockets.delete(socket));
  });
  receivers.push(receiver);
  return receiver;
}

function makeClient(options: Partial<WebhookClientOptions> = {}): WebhookClient {
  const client = new WebhookClient({ timeoutMs: 5000, maxResponseBytes: 1024 * 1024, allowedHosts: [], allowLoopback: true, ...options });
  clients.push(client);
  return client;
}

const json = (value: unknown) => ({ contentType: "application/json", data: JSON.stringify(value) });

/** The error a promise rejects with (fails the test if it resolves). */
async function failure(promise: Promise<unknown>): Promise<WebhookRequestError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookRequestError);
    return error as WebhookRequestError;
  }
  throw new Error("expected the post to fail");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts TCP connection attempts made anywhere in this process. */
function spyOnConnect() {
  return jest.spyOn(net.Socket.prototype, "connect");
}

/** Makes dns.lookup answer `answers[i]` for the i-th lookup of `hostname` (the last answer repeats). */
function stubDns(hostname: string, answers: dns.LookupAddress[][]) {
  const real = dns.lookup;
  let calls = 0;
  const spy = jest.spyOn(dns, "lookup").mockImplementation(((host: string, options: dns.LookupAllOptions, callback: (e: null, a: dns.LookupAddress[]) => void) => {
    if (host !== hostname) return (real as Function)(host, options, callback);
    const answer = answers[Math.min(calls++, answers.length - 1)];
    expect(options.all).toBe(true);
    process.nextTick(callback, null, answer);
  }) as never);
  return { spy, calls: () => calls };
}

describe("posting", () => {
  test("a JSON body is posted with only the expected headers, and the JSON answer returned", async () => {
    const receiver = await startReceiver();
    const client = makeClient({ userAgent: "ZulipOutgoingWebhook/3.0" });
    const response = await client.post(receiver.url("/hook?x=1#frag"), json({ data: "ping", token: "t" }));

    expect(response.status).toBe(200);
    expect(response.contentType).toBe("application/json");
    expect(JSON.parse(response.body.toString())).toEqual({ content: "pong" });
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request.method).toBe("POST");
    expect(request.url).toBe("/hook?x=1");
    expect(JSON.parse(request.body)).toEqual({ data: "ping", token: "t" });
    // Connection: keep-alive is Node's hop-by-hop header for the pooled socket; nothing else is added.
    expect(Object.keys(request.headers).sort()).toEqual(["connection", "content-length", "content-type", "host", "user-agent"]);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["content-length"]).toBe(String(Buffer.byteLength(request.body)));
    expect(request.headers["user-agent"]).toBe("ZulipOutgoingWebhook/3.0");
    expect(request.headers.host).toBe(`127.0.0.1:${receiver.port}`);
  });

  test("a Buffer body with a multi-byte string is sent byte for byte", async () => {
    const receiver = await startReceiver();
    const data = Buffer.from("é ✓ 🙂");
    await makeClient().post(receiver.url(), { contentType: "text/plain; charset=utf-8", data });
    expect(receiver.received[0].body).toBe("é ✓ 🙂");
    expect(receiver.received[0].headers["content-length"]).toBe(String(data.length));
  });

  test("a 500 is returned as a status with its body, not thrown", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(500, { "Content-Type": "text/plain" });
      res.end("broken");
    });
    const response = await makeClient().post(receiver.url(), json({}));
    expect(response.status).toBe(500);
    expect(response.body.toString()).toBe("broken");
    expect(response.contentType).toBe("text/plain");
  });

  test("an empty 204 gives an empty body", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const response = await makeClient().post(receiver.url(), json({}));
    expect(response.status).toBe(204);
    expect(response.body.length).toBe(0);
    expect(response.contentType).toBeUndefined();
  });

  test("a 302 is returned as it is and not followed", async () => {
    const target = await startReceiver();
    const origin = await startReceiver((_req, res) => {
      res.writeHead(302, { Location: target.url("/elsewhere") });
      res.end();
    });
    const response = await makeClient().post(origin.url(), json({}));
    expect(response.status).toBe(302);
    await sleep(100);
    expect(target.connections).toBe(0);
    expect(origin.received).toHaveLength(1);
  });

  test("an invalid Content-Type is refused before any connection", async () => {
    const receiver = await startReceiver();
    const error = await failure(makeClient().post(receiver.url(), { contentType: "text/plain\r\nX-Injected: 1", data: "" }));
    expect(error.kind).toBe("other");
    expect(receiver.connections).toBe(0);
  });
});

describe("time and size limits", () => {
  test("a receiver that never answers times out at timeoutMs", async () => {
    const receiver = await startReceiver(() => {});
    const start = Date.now();
    const error = await failure(makeClient({ timeoutMs: 300 }).post(receiver.url(), json({})));
    const elapsed = Date.now() - start;
    expect(error.kind).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(800);
    // The socket is aborted, not left open.
    await waitFor(() => receiver.sockets.size === 0);
  });

  test("a receiver that sends its body slowly times out at timeoutMs, headers or not", async () => {
    let serverSawClose = false;
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      const timer = setInterval(() => res.write("."), 50);
      res.on("close", () => {
        clearInterval(timer);
        serverSawClose = true;
      });
    });
    const start = Date.now();
    const error = await failure(makeClient({ timeoutMs: 400 }).post(receiver.url(), json({})));
    const elapsed = Date.now() - start;
    expect(error.kind).toBe("timeout");
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(1100);
    await waitFor(() => serverSawClose);
  });

  test("a body of exactly maxResponseBytes is accepted", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(1000, 97));
    });
    const response = await makeClient({ maxResponseBytes: 1000 }).post(receiver.url(), json({}));
    expect(response.body.length).toBe(1000);
  });

  test("a declared Content-Length over the limit fails at once, without waiting for the body", async () => {
    let serverSawClose = false;
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "Content-Length": String(2 * 1024 * 1024) });
      res.write("x"); // then nothing: only the header can tell the client
      res.on("close", () => (serverSawClose = true));
    });
    const start = Date.now();
    const error = await failure(makeClient({ timeoutMs: 5000 }).post(receiver.url(), json({})));
    expect(error.kind).toBe("too-large");
    expect(Date.now() - start).toBeLessThan(1000);
    await waitFor(() => serverSawClose);
  });

  test("a chunked body over the limit fails once past it, and the client stops reading", async () => {
    const total = 64 * 1024 * 1024;
    const stream = { written: 0, finished: false, closed: false };
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/octet-stream" }); // no length: chunked
      const chunk = Buffer.alloc(64 * 1024, 120);
      const pump = () => {
        while (stream.written < total && !stream.closed) {
          stream.written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!stream.closed) res.end(() => (stream.finished = true));
      };
      res.on("close", () => (stream.closed = true));
      pump();
    });
    const error = await failure(makeClient({ maxResponseBytes: 1024 * 1024 }).post(receiver.url(), json({})));
    expect(error.kind).toBe("too-large");
    await waitFor(() => stream.closed);
    expect(stream.finished).toBe(false);
    // What the server wrote before it saw the close: the limit plus socket buffers, far from all.
    expect(stream.written).toBeLessThan(16 * 1024 * 1024);
  });
});

describe("destinations", () => {
  test("loopback is refused unless allowed, by IP or by a name that resolves to it, and nothing connects", async () => {
    const receiver = await startReceiver();
    const client = makeClient({ allowLoopback: false });
    const byIp = await failure(client.post(receiver.url(), json({})));
    expect(byIp.kind).toBe("refused-address");
    expect(byIp.message).toBe(`the destination 127.0.0.1:${receiver.port} is not allowed`);
    const byName = await failure(client.post(`http://localhost:${receiver.port}/`, json({})));
    expect(byName.kind).toBe("refused-address");
    expect(byName.message).toBe(`the destination localhost:${receiver.port} is not allowed`); // no resolved address in it
    await sleep(50);
    expect(receiver.connections).toBe(0);
  });

  test("allowLoopback allows loopback by IP and by name, and nothing else internal", async () => {
    const receiver = await startReceiver();
    const client = makeClient({ allowLoopback: true });
    expect((await client.post(receiver.url(), json({}))).status).toBe(200);
    expect((await client.post(`http://localhost:${receiver.port}/`, json({}))).status).toBe(200);
    const connect = spyOnConnect();
    for (const url of ["http://10.0.0.1/", "http://169.254.169.254/", "http://192.168.0.1/", "http://[fd00::1]/"]) {
      expect((await failure(client.post(url, json({})))).kind).toBe("refused-address");
    }
    expect(connect).not.toHaveBeenCalled();
  });

  test("allowedHosts by hostname allows that name whatever it resolves to, but not the IP", async () => {
    const receiver = await startReceiver();
    const client = makeClient({ allowLoopback: false, allowedHosts: ["LocalHost"] });
    expect((await client.post(`http://localhost:${receiver.port}/`, json({}))).status).toBe(200);
    expect((await failure(client.post(receiver.url(), json({})))).kind).toBe("refused-address");
    expect(receiver.received).toHaveLength(1);
  });

  test("allowedHosts by IP allows the address connected to, and only it", async () => {
    const receiver = await startReceiver();
    const allowed = makeClient({ allowLoopback: false, allowedHosts: ["127.0.0.1"] });
    expect((await allowed.post(receiver.url(), json({}))).status).toBe(200);
    const other = makeClient({ allowLoopback: false, allowedHosts: ["127.0.0.2"] });
    expect((await failure(other.post(receiver.url(), json({})))).kind).toBe("refused-address");
    expect(receiver.received).toHaveLength(1);
  });

  test("allowedHosts by CIDR allows addresses in the range, and only them", async () => {
    const receiver = await startReceiver();
    const allowed = makeClient({ allowLoopback: false, allowedHosts: ["127.0.0.0/8"] });
    expect((await allowed.post(receiver.url(), json({}))).status).toBe(200);
    const other = makeClient({ allowLoopback: false, allowedHosts: ["127.0.0.2/32", "10.0.0.0/8"] });
    expect((await failure(other.post(receiver.url(), json({})))).kind).toBe("refused-address");
    expect(receiver.received).toHaveLength(1);
  });

  test.each([
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://255.255.255.255/",
    "http://127.0.0.1/",
    "http://2130706433/", // 127.0.0.1 in decimal
    "http://0x7f.1/", // and in hex
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[fe80::1]/",
    "http://[fd12:3456::1]/",
    "http://[ff02::1]/",
    "http://[::7f00:1]/", // IPv4-compatible 127.0.0.1
    "http://[64:ff9b::a00:1]/", // NAT64 of 10.0.0.1
    "http://[2002:a9fe:a9fe::1]/", // 6to4 of 169.254.169.254
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", // Teredo
    "https://10.0.0.1/",
  ])("the literal address in %s is refused without a connection attempt", async (url) => {
    const connect = spyOnConnect();
    const error = await failure(makeClient({ allowLoopback: false }).post(url, json({})));
    expect(error.kind).toBe("refused-address");
    expect(connect).not.toHaveBeenCalled();
  });

  test("https resolves through the same check: a name resolving to loopback is refused", async () => {
    let connections = 0;
    const tcp = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    try {
      const port = (tcp.address() as net.AddressInfo).port;
      const error = await failure(makeClient({ allowLoopback: false }).post(`https://localhost:${port}/`, json({})));
      expect(error.kind).toBe("refused-address");
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  test("a name resolving to a public and an internal address is refused", async () => {
    const dnsStub = stubDns("mixed.example", [
      [
        { address: "93.184.215.14", family: 4 },
        { address: "127.0.0.1", family: 4 },
      ],
    ]);
    const connect = spyOnConnect();
    const error = await failure(makeClient({ allowLoopback: false }).post("http://mixed.example/", json({})));
    expect(error.kind).toBe("refused-address");
    expect(error.message).not.toMatch(/127|93\./);
    expect(dnsStub.calls()).toBe(1);
    // The socket was created (the lookup runs inside connect), but never connected anywhere.
    expect(connect).toHaveBeenCalledTimes(1);
  });

  test("every new connection checks the addresses again (DNS rebinding)", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { Connection: "close" }); // each post needs a new connection
      res.end("ok");
    });
    const dnsStub = stubDns("rebind.example", [[{ address: "127.0.0.1", family: 4 }], [{ address: "10.0.0.1", family: 4 }]]);
    const client = makeClient({ allowLoopback: false, allowedHosts: ["127.0.0.1"] });
    const url = `http://rebind.example:${receiver.port}/`;
    expect((await client.post(url, json({}))).status).toBe(200);
    await waitFor(() => receiver.sockets.size === 0);
    expect((await failure(client.post(url, json({})))).kind).toBe("refused-address");
    expect(dnsStub.calls()).toBe(2);
    expect(receiver.received).toHaveLength(1);
  });

  test("a name that does not exist is not-found (it will not exist on a retry either)", async () => {
    const error = await failure(makeClient().post("http://no-such-host.invalid/", json({})));
    expect(error.kind).toBe("not-found");
    expect(error.message).toBe("no-such-host.invalid was not found");
  });

  test("a closed port is a connection error", async () => {
    const receiver = await startReceiver();
    const url = receiver.url();
    await new Promise((resolve) => receiver.server.close(resolve));
    const error = await failure(makeClient().post(url, json({})));
    expect(error.kind).toBe("connection");
    expect(error.message).toBe(`127.0.0.1:${receiver.port} refused the connection`);
  });
});

describe("URLs", () => {
  test("a URL of 2048 characters is accepted", async () => {
    const receiver = await startReceiver();
    const url = receiver.url("/");
    const response = await makeClient().post(url + "a".repeat(2048 - url.length), json({}));
    expect(response.status).toBe(200);
    expect(receiver.received[0].url).toHaveLength(2048 - url.length + 1);
  });

  const longUrl = `http://example.com/${"a".repeat(2030)}`; // 2049 characters
  test.each([
    ["ftp://example.com/hook", "ftp://example.com/hook", "the URL must be http or https"],
    ["file:///etc/passwd", "file:///etc/passwd", "the URL must be http or https"],
    ["gopher://127.0.0.1:6379/_INFO", "gopher://127.0.0.1:6379/_INFO", "the URL must be http or https"],
    ["http://user:pass@example.com/", "http://user:pass@example.com/", "the URL must not hold credentials"],
    ["http://user@127.0.0.1/", "http://user@127.0.0.1/", "the URL must not hold credentials"],
    ["not a url", "not a url", "the URL is not valid"],
    ["http://", "http://", "the URL is not valid"],
    ["a URL of 2049 characters", longUrl, "the URL is longer than 2048 characters"],
  ])("%s is refused as a bad URL without a connection attempt", async (_label, url, message) => {
    const connect = spyOnConnect();
    const error = await failure(makeClient().post(url, json({})));
    expect(error.kind).toBe("bad-url");
    expect(error.message).toBe(message);
    expect(connect).not.toHaveBeenCalled();
  });
});

describe("connections", () => {
  // Two, not one: undici checks an idle socket for a close the server sent (one turn of the event
  // loop) before reusing it, and a post that comes meanwhile takes a second connection. Fifty
  // posts still use those two, with a lookup each.
  test("sequential posts reuse keep-alive connections, with a lookup per connection", async () => {
    const receiver = await startReceiver();
    const lookups = jest.spyOn(dns, "lookup");
    const client = makeClient();
    for (let i = 0; i < 50; i++) expect((await client.post(`http://localhost:${receiver.port}/`, json({ i }))).status).toBe(200);
    expect(receiver.received).toHaveLength(50);
    expect(receiver.connections).toBeLessThanOrEqual(2);
    expect(lookups).toHaveBeenCalledTimes(receiver.connections);
  });

  test("concurrent posts to one host use at most 64 sockets", async () => {
    const receiver = await startReceiver((_req, res) => setTimeout(() => res.end("ok"), 20));
    const client = makeClient();
    const responses = await Promise.all(Array.from({ length: 150 }, () => client.post(receiver.url(), json({}))));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    expect(receiver.connections).toBeGreaterThan(1);
    expect(receiver.connections).toBeLessThanOrEqual(64);
  });

  test("a keep-alive connection the server closed while idle is replaced, not reported", async () => {
    const receiver = await startReceiver();
    const client = makeClient();
    expect((await client.post(receiver.url(), json({}))).status).toBe(200);
    // The server drops the idle socket; the client has not yet seen the close when it posts again.
    for (const socket of receiver.sockets) socket.destroy();
    expect((await client.post(receiver.url(), json({}))).status).toBe(200);
    expect(receiver.received).toHaveLength(2);
  });

  test("close() closes idle keep-alive sockets and later posts fail", async () => {
    const receiver = await startReceiver();
    const client = makeClient();
    await client.post(receiver.url(), json({}));
    await sleep(50);
    expect(receiver.sockets.size).toBe(1); // kept alive, the server would not close it for 60 s
    client.close();
    await waitFor(() => receiver.sockets.size === 0);
    const error = await failure(client.post(receiver.url(), json({})));
    expect(error.kind).toBe("other");
    expect(receiver.connections).toBe(1);
  });

  test("close() fails a post in flight", async () => {
    const receiver = await startReceiver(() => {});
    const client = makeClient();
    const pending = failure(client.post(receiver.url(), json({})));
    await waitFor(() => receiver.received.length === 1);
    client.close();
    expect((await pending).kind).toBe("connection");
    await waitFor(() => receiver.sockets.size === 0);
  });
});

describe("DestinationPolicy", () => {
  const policy = new DestinationPolicy([], false);

  test.each(["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])(
    "%s, a public address or one embedding it, is allowed",
    (address) => expect(policy.allowsAddress(address)).toBe(true),
  );

  test.each([
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.31.255.255",
    "192.168.0.1",
    "169.254.169.254",
    "100.64.0.1",
    "100.127.255.255",
    "0.0.0.0",
    "0.1.2.3",
    "224.0.0.251",
    "239.255.255.250",
    "255.255.255.255",
    "192.0.2.1",
    "198.18.0.1",
    "240.0.0.1",
    "::",
    "::1",
    "::ffff:10.0.0.1",
    "::ffff:0:127.0.0.1",
    "fe80::1",
    "fc00::1",
    "fdff::1",
    "ff02::1",
    "::7f00:1",
    "64:ff9b::7f00:1",
    "64:ff9b:1::808:808",
    "2002:c0a8:0101::1",
    "2001::1",
    "2001:db8::1",
    "not an address",
  ])("%s is refused", (address) => expect(policy.allowsAddress(address)).toBe(false));

  test("allowLoopback allows loopback, including its IPv4-mapped form, and nothing else", () => {
    const loopback = new DestinationPolicy([], true);
    expect(loopback.allowsAddress("127.0.0.1")).toBe(true);
    expect(loopback.allowsAddress("127.9.9.9")).toBe(true);
    expect(loopback.allowsAddress("::1")).toBe(true);
    expect(loopback.allowsAddress("::ffff:127.0.0.1")).toBe(true);
    expect(loopback.allowsAddress("2002:7f00:1::1")).toBe(false); // 6to4 of loopback is not loopback
    expect(loopback.allowsAddress("10.0.0.1")).toBe(false);
    expect(loopback.allowsAddress("169.254.169.254")).toBe(false);
  });

  test("allowed IPs and CIDRs match IPv4 addresses also in their IPv4-mapped form", () => {
    const allowed = new DestinationPolicy(["10.1.0.0/16", "[fd00::5]", "192.168.1.7", "::ffff:172.16.0.0/108"], false);
    expect(allowed.allowsAddress("10.1.200.3")).toBe(true);
    expect(allowed.allowsAddress("::ffff:10.1.200.3")).toBe(true);
    expect(allowed.allowsAddress("10.2.0.1")).toBe(false);
    expect(allowed.allowsAddress("fd00::5")).toBe(true);
    expect(allowed.allowsAddress("fd00::6")).toBe(false);
    expect(allowed.allowsAddress("192.168.1.7")).toBe(true);
    expect(allowed.allowsAddress("192.168.1.8")).toBe(false);
    expect(allowed.allowsAddress("172.16.3.4")).toBe(true);
    expect(allowed.allowsAddress("172.31.0.1")).toBe(true); // ::ffff:172.16.0.0/108 is 172.16.0.0/12
  });

  test("allowed hostnames match as a URL writes them", () => {
    const allowed = new DestinationPolicy(["Bots.Internal.", "bücher.example", " "], false);
    expect(allowed.allowsHostname("bots.internal")).toBe(true);
    expect(allowed.allowsHostname("bots.internal.")).toBe(true);
    expect(allowed.allowsHostname("xn--bcher-kva.example")).toBe(true);
    expect(allowed.allowsHostname("other.internal")).toBe(false);
    expect(allowed.allowsHostname("internal")).toBe(false);
  });

  test.each(["http://bots.internal", "bots.internal:8080", "10.0.0.0/33", "10.0.0.0/x", "a b", "user@host"])(
    "%s is not a valid allowed-hosts entry",
    (entry) => expect(() => new DestinationPolicy([entry], false)).toThrow(/allowed hosts/),
  );
});

async function waitFor(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(10);
  }
}
