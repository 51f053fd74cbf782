// One owner per data folder (the embedded database): a second server stops, the CLI has a running
// server carry out its command (so its change reaches clients as an event), and a killed owner's
// lock is taken over. Real processes on a real folder.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { acquireDataDirLock, DataDirBusyError, dataDirOwner, LOCK_FILE, type LockOwner } from "../../apps/server/src/data-dir-lock.ts";
import { TYPESCRIPT_NODE_ARGS } from "../../apps/server/src/local-cluster.ts";
import { runCliProcess } from "../support/cli-process.ts";
import { ApiClient } from "../support/client.ts";
import { startProcess, type ServerProcess } from "../support/processes.ts";

jest.setTimeout(180_000);

const OWNER = "owner@example.com";
const PASSWORD = "owner-password";

let dataDir: string;
let env: Record<string, string>;
let server: ServerProcess | null = null;

async function login(port: number | null): Promise<ApiClient> {
  const url = `http://127.0.0.1:${port}`;
  const res = await new ApiClient(url, null).post("/fetch_api_key", { username: OWNER, password: PASSWORD });
  expect(res.body.result).toBe("success");
  return new ApiClient(url, { email: OWNER, apiKey: res.body.api_key });
}

function lockOwner(): LockOwner {
  return JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), "utf8")) as LockOwner;
}

beforeAll(() => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "chat-owner-"));
  env = { ROLE: "all", PORT: "0", BIND_ADDRESS: "127.0.0.1", DATA_DIR: dataDir, BOOTSTRAP_OWNER_EMAIL: OWNER, BOOTSTRAP_OWNER_PASSWORD: PASSWORD };
});

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a running embedded server owns its data folder", () => {
  test("the CLI's create-user is carried out by the server, and a connected client gets the new user as an event", async () => {
    server = await startProcess(env);
    expect(lockOwner()).toMatchObject({ pid: server.child.pid, kind: "server" });
    const owner = await login(server.port);
    const queue = await owner.post("/register", { event_types: ["realm_user"] });
    expect(queue.body.result).toBe("success");

    const created = await runCliProcess(["create-user", "--email", "cli-made@example.com", "--name", "Cli Made", "--password", "cli-made-password"], { DATA_DIR: dataDir });
    expect(created).toMatchObject({ code: 0, stderr: "" });
    expect(created.stdout).toMatch(/^created user \d+ cli-made@example\.com \(member\)/);
    // The server did it: its log names the command.
    expect(server.output()).toMatch(/"command":"create-user".*"message":"operator command"/);

    const events = await owner.get("/events", { queue_id: queue.body.queue_id, last_event_id: -1 });
    expect(events.body.events).toEqual([expect.objectContaining({ type: "realm_user", op: "add", person: expect.objectContaining({ email: "cli-made@example.com", full_name: "Cli Made" }) })]);
    const login2 = await new ApiClient(`http://127.0.0.1:${server.port}`, null).post("/fetch_api_key", { username: "cli-made@example.com", password: "cli-made-password" });
    expect(login2.body.result).toBe("success");

    // Role changes and deactivation go the same way.
    const role = await runCliProcess(["change-role", "--email", "cli-made@example.com", "--role", "admin"], { DATA_DIR: dataDir });
    expect(role).toMatchObject({ code: 0, stdout: "cli-made@example.com is now admin (was member)\n" });
    const more = await owner.get("/events", { queue_id: queue.body.queue_id, last_event_id: events.body.events[0].id });
    expect(more.body.events).toEqual([expect.objectContaining({ type: "realm_user", op: "update", person: { user_id: login2.body.user_id, role: 200 } })]);
  });

  test("set-password from standard input and password-reset-link, carried out by the server", async () => {
    const url = `http://127.0.0.1:${server!.port}`;
    const weak = await runCliProcess(["set-password", "--email", "cli-made@example.com", "--password-stdin"], { DATA_DIR: dataDir }, { stdin: "abc\n" });
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/^Error: .*password/i);
    const set = await runCliProcess(["set-password", "--email", "cli-made@example.com", "--password-stdin"], { DATA_DIR: dataDir }, { stdin: "quiet-harbour-lantern-93\n" });
    expect(set).toMatchObject({ code: 0, stdout: "set a new password for cli-made@example.com\n" });
    const anonymous = new ApiClient(url, null);
    expect((await anonymous.post("/fetch_api_key", { username: "cli-made@example.com", password: "quiet-harbour-lantern-93" })).body.result).toBe("success");
    expect((await anonymous.post("/fetch_api_key", { username: "cli-made@example.com", password: "cli-made-password" })).status).toBe(401);

    const link = await runCliProcess(["password-reset-link", "--email", "cli-made@example.com"], { DATA_DIR: dataDir });
    expect(link.code).toBe(0);
    const printed = /^(http:\/\/localhost:\d+)(\/accounts\/password\/reset\/[\w-]+\/)\n\(valid once, until \S+\)\n$/.exec(link.stdout);
    expect(printed).not.toBeNull();
    const page = await fetch(`${url}${printed![2]}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<form/);
  });

  test("a second server on the same folder stops at once and says what to do", async () => {
    const refused = startProcess({ ...env, PORT: "0" }, { timeoutMs: 30_000 });
    await expect(refused).rejects.toThrow(new RegExp(`exited with 1 before it was ready:\\s*The data folder ${dataDir} is in use by a server \\(pid ${server!.child.pid}\\).*Stop it`));
    // The first one still serves, and still owns the folder.
    expect((await (await login(server!.port)).get("/users/me")).body.result).toBe("success");
    expect(lockOwner().pid).toBe(server!.child.pid);
  });

  test("restore is refused while the server runs; a mistaken command changes nothing", async () => {
    const restore = await runCliProcess(["restore", path.join(dataDir, "nothing.backup")], { DATA_DIR: dataDir });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(/stop the server first/);
    // db:migrate opens the database files too: not beside a server (which migrated at start).
    const migrate = await runCliProcess([], { DATA_DIR: dataDir }, { entry: "migrate" });
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toMatch(/is in use by a server \(pid \d+\)/);
    const unknownUser = await runCliProcess(["deactivate-user", "--email", "nobody@example.com"], { DATA_DIR: dataDir });
    expect(unknownUser).toMatchObject({ code: 1, stderr: expect.stringMatching(/no user nobody@example\.com/) });
    const lastOwner = await runCliProcess(["change-role", "--email", OWNER, "--role", "member"], { DATA_DIR: dataDir });
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toMatch(/only organization owner/);
  });

  test("a killed server's lock is stale: the CLI then works on the folder itself, and a new server takes over", async () => {
    const deadPid = server!.child.pid;
    await server!.kill();
    server = null;
    expect(lockOwner().pid).toBe(deadPid);
    expect(dataDirOwner(dataDir)).toBeNull();

    const listed = await runCliProcess(["list-users"], { DATA_DIR: dataDir });
    expect(listed.code).toBe(0);
    // Written by the server before it died, read by the CLI from the database files.
    expect(listed.stdout).toMatch(/cli-made@example\.com\s+Cli Made\s+admin/);
    // The CLI released what it took.
    expect(dataDirOwner(dataDir)).toBeNull();

    // Left stale again, taken over by a server this time.
    writeFileSync(path.join(dataDir, LOCK_FILE), JSON.stringify({ ...lockOwnerTemplate(), pid: deadPid, token: "stale" }));
    server = await startProcess(env);
    expect(server.output()).toMatch(/took over the data folder's lock from a process that is gone/);
    expect(lockOwner().pid).toBe(server.child.pid);
    await server.stop();
    server = null;
    // A clean stop leaves no lock.
    expect(() => lockOwner()).toThrow(/ENOENT/);
  });

  test("a server does not start while an operator command holds the folder", async () => {
    const lock = acquireDataDirLock(dataDir, { kind: "cli" });
    try {
      await expect(startProcess(env, { timeoutMs: 30_000 })).rejects.toThrow(/in use by an operator command \(pid \d+\) since \S+ Wait for it to finish/);
    } finally {
      lock.release();
    }
  });
});

describe("a data folder that cannot be used", () => {
  test.each([
    ["a file", () => path.join(dataDir, LOCK_FILE + ".not-a-folder"), /DATA_DIR \S+ is not a folder: set DATA_DIR to a folder this user may write/],
    // Node's own recursive mkdir spins forever here.
    ["a path under /proc", () => "/proc/no-such-process/data", /DATA_DIR \/proc\/no-such-process\/data cannot be created/],
  ])("DATA_DIR on %s stops the server with a message", async (_name, folder, message) => {
    const target = folder();
    if (target.startsWith(dataDir)) writeFileSync(target, "");
    await expect(startProcess({ ...env, DATA_DIR: target }, { timeoutMs: 30_000 })).rejects.toThrow(message);
  });
});

function lockOwnerTemplate(): LockOwner {
  return { token: "x", pid: 1, host: os.hostname(), startTime: null, kind: "server", socket: null, since: new Date().toISOString() };
}

describe("the lock itself", () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), "chat-lock-"));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  const writeLock = (owner: Partial<LockOwner>) => writeFileSync(path.join(folder, LOCK_FILE), JSON.stringify({ ...lockOwnerTemplate(), ...owner }));

  test("a live pid with another start time is a reused pid, not the owner", () => {
    // Our parent lives; its start time is not this one.
    writeLock({ pid: process.ppid, startTime: "1" });
    const lock = acquireDataDirLock(folder, { kind: "cli" });
    expect(lock.owner.pid).toBe(process.pid);
    lock.release();
    writeLock({ pid: process.ppid, startTime: null });
    expect(() => acquireDataDirLock(folder, { kind: "cli" })).toThrow(DataDirBusyError);
  });

  test("another host's owner lives while it keeps its heartbeat", () => {
    writeLock({ host: "elsewhere", pid: 12345 });
    expect(() => acquireDataDirLock(folder, { kind: "server" })).toThrow(/in use by a server \(pid 12345 on elsewhere\)/);
    const old = new Date(Date.now() - 120_000);
    utimesSync(path.join(folder, LOCK_FILE), old, old);
    acquireDataDirLock(folder, { kind: "server" }).release();
  });

  test("a half-written lock is stale", () => {
    writeFileSync(path.join(folder, LOCK_FILE), '{"pid": 4');
    acquireDataDirLock(folder, { kind: "cli" }).release();
  });

  test("of several processes taking over one stale lock at once, exactly one wins", async () => {
    writeLock({ pid: 2 ** 22 + 7, token: "stale" });
    const contender = path.resolve(__dirname, "../support/lock-contender.ts");
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, [...TYPESCRIPT_NODE_ARGS, contender, folder], { stdio: ["ignore", "pipe", "inherit"] });
          let out = "";
          child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
          child.once("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`contender exited with ${code}`))));
        }),
      ),
    );
    expect(results.filter((r) => r === "won")).toHaveLength(1);
    expect(results.filter((r) => r === "busy")).toHaveLength(5);
  });
});
