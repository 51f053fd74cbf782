import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { createTestDatabase, type TestDatabase } from "../../../test/support/services.ts";
import { TYPESCRIPT_NODE_ARGS } from "../src/local-cluster.ts";

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, "../../..");

// Each case starts several CLI processes one after another (Node, tsx, the database): about 15 s
// alone, past a minute on a machine busy with the rest of the suite.
jest.setTimeout(180_000);

describe("operator CLI (npm run cli)", () => {
  let db: TestDatabase;
  const cli = (args: string[]) =>
    run(process.execPath, [...TYPESCRIPT_NODE_ARGS, "apps/server/src/cli.ts", ...args], { cwd: ROOT, env: { PATH: process.env.PATH, DATABASE_URL: db.url, LOG_LEVEL: "warn" } });

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  test("creates a realm with its owner, users, regenerates keys and lists them", async () => {
    const realm = await cli(["create-realm", "--subdomain", "acme", "--name", "Acme Corp", "--owner-email", "ceo@acme.io", "--owner-name", "Cee Eo"]);
    expect(realm.stdout).toMatch(/created realm \d+ "Acme Corp" at subdomain "acme"/);
    expect(realm.stdout).toMatch(/password: \S{12,}/);
    const firstKey = /api key: (\w{32})/.exec(realm.stdout)![1];

    const user = await cli(["create-user", "--realm", "acme", "--email", "dev@acme.io", "--name", "Dee Vee", "--role", "admin", "--password", "dev-password"]);
    expect(user.stdout).toMatch(/created user \d+ dev@acme\.io \(admin\)/);
    expect(user.stdout).not.toMatch(/password:/);

    const key = await cli(["regenerate-api-key", "--realm", "acme", "--email", "ceo@acme.io"]);
    const newKey = /api key: (\w{32})/.exec(key.stdout)![1];
    expect(newKey).not.toBe(firstKey);

    const realms = await cli(["list-realms"]);
    // The owner, the admin, and the realm's Notification Bot, made with it.
    expect(realms.stdout).toMatch(/acme\s+Acme Corp\s+3\s+false/);
    const users = await cli(["list-users", "--realm", "acme"]);
    expect(users.stdout).toMatch(/ceo@acme\.io\s+Cee Eo\s+owner/);
    expect(users.stdout).toMatch(/dev@acme\.io\s+Dee Vee\s+admin/);
    expect(users.stdout).toMatch(/notification-bot@\S+\s+Notification Bot\s+member\s+true\s+true/);

    const changed = await cli(["change-user-email", "--realm", "acme", "--email", "dev@acme.io", "--new-email", "dee@acme.io"]);
    expect(changed.stdout).toMatch(/user \d+ is now dee@acme\.io/);
    expect((await cli(["list-users", "--realm", "acme"])).stdout).toMatch(/dee@acme\.io\s+Dee Vee\s+admin/);
    await expect(cli(["change-user-email", "--realm", "acme", "--email", "dee@acme.io", "--new-email", "ceo@acme.io"])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("Email 'ceo@acme.io' already in use"),
    });
    await cli(["change-user-email", "--realm", "acme", "--email", "dee@acme.io", "--new-email", "dev@acme.io"]);
  });

  test("npm run db:migrate applies the migrations once, then reports the database up to date", async () => {
    const fresh = await createTestDatabase();
    try {
      const migrate = () => run(process.execPath, [...TYPESCRIPT_NODE_ARGS, "apps/server/src/migrate.ts"], { cwd: ROOT, env: { PATH: process.env.PATH, DATABASE_URL: fresh.url } });
      const first = (await migrate()).stdout;
      // Each migration is logged as it is applied, then the summary.
      expect(first).toMatch(/"message":"migration applied","migration":"0001_init"/);
      expect(first).toMatch(/^applied: 0001_init, 0002_hot_path_indexes/m);
      expect((await migrate()).stdout).toBe("database is up to date\n");
      await expect(run(process.execPath, [...TYPESCRIPT_NODE_ARGS, "apps/server/src/migrate.ts"], { cwd: ROOT, env: { PATH: process.env.PATH, DATABASE_URL: "mysql://x" } })).rejects.toMatchObject({
        stderr: expect.stringContaining("Configuration error: DATABASE_URL must start with postgres://"),
      });
    } finally {
      await fresh.drop();
    }
  });

  test("errors are clear and exit non-zero", async () => {
    await expect(cli(["create-realm", "--subdomain", "acme", "--name", "Again", "--owner-email", "x@acme.io"])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("Subdomain 'acme' is already in use"),
    });
    await expect(cli(["create-user", "--realm", "acme", "--email", "dev@acme.io", "--name", "Dup"])).rejects.toMatchObject({
      stderr: expect.stringContaining("Email 'dev@acme.io' already in use"),
    });
    await expect(cli(["list-users", "--realm", "nope"])).rejects.toMatchObject({ stderr: expect.stringContaining('no organization has the subdomain "nope"') });
    await expect(cli(["frobnicate"])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command: frobnicate") });
    await expect(cli(["create-user", "--realm", "acme"])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("--email is required") });
    await expect(cli(["create-user", "--realm", "acme", "--email", "r@acme.io", "--name", "R", "--role", "king"])).rejects.toMatchObject({ stderr: expect.stringContaining("--role must be one of") });
  });
});
