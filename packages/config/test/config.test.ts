import path from "node:path";
import { ConfigError, loadConfig } from "@chat/config";

describe("loadConfig", () => {
  test("defaults run everything embedded on port 9991", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      role: "all",
      processes: 1,
      port: 9991,
      databaseUrl: null,
      redisUrl: null,
      devMode: false,
      dataDir: path.resolve("./data"),
      externalHost: "localhost:9991",
      eventHeartbeatSeconds: 50,
      eventQueueIdleSeconds: 600,
      bootstrap: { realmName: "Team Chat", ownerEmail: "owner@example.com", ownerName: "Owner", ownerPassword: null },
    });
  });

  test("reads every setting from the environment", () => {
    const config = loadConfig({
      ROLE: "events",
      PORT: "8080",
      DATABASE_URL: "postgres://u@db:5432/chat",
      REDIS_URL: "redis://cache:6379/2",
      DEV_MODE: "true",
      DATA_DIR: "/var/lib/chat",
      EXTERNAL_HOST: "Chat.Example.com",
      EVENT_HEARTBEAT_SECONDS: "20",
      BOOTSTRAP_OWNER_PASSWORD: "long-enough",
      PROCESSES: "2",
    });
    expect(config).toMatchObject({
      role: "events",
      processes: 2,
      port: 8080,
      databaseUrl: "postgres://u@db:5432/chat",
      redisUrl: "redis://cache:6379/2",
      devMode: true,
      dataDir: "/var/lib/chat",
      externalHost: "chat.example.com",
      eventHeartbeatSeconds: 20,
    });
    expect(config.bootstrap.ownerPassword).toBe("long-enough");
  });

  test.each([
    [{ ROLE: "frontend" }, /ROLE must be one of all, api, events, worker/],
    [{ PORT: "http" }, /PORT must be a whole number/],
    [{ PORT: "70000" }, /PORT must be between 0 and 65535/],
    [{ DEV_MODE: "maybe" }, /DEV_MODE must be true or false/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//],
    [{ DATABASE_URL: "not a url" }, /DATABASE_URL is not a valid URL/],
    [{ REDIS_URL: "redis://x:6379" }, /REDIS_URL is set without DATABASE_URL/],
    [{ ROLE: "api" }, /ROLE=api runs one tier of several processes/],
    [{ ROLE: "worker", DATABASE_URL: "postgres://x/y" }, /set DATABASE_URL and REDIS_URL/],
    [{ PROCESSES: "2" }, /PROCESSES above 1 runs several processes/],
    [{ PROCESSES: "0", DATABASE_URL: "postgres://x/y", REDIS_URL: "redis://x:6379" }, /PROCESSES must be between 1 and 256/],
    [{ BOOTSTRAP_OWNER_EMAIL: "nobody" }, /BOOTSTRAP_OWNER_EMAIL is not an email address/],
    [{ BOOTSTRAP_OWNER_PASSWORD: "short" }, /at least 8 characters/],
    [{ EVENT_HEARTBEAT_SECONDS: "0" }, /EVENT_HEARTBEAT_SECONDS must be between 1 and 600/],
  ])("%j is refused with a message naming the variable", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
