import path from "node:path";
import { ConfigError, loadConfig, sharedRedis } from "@chat/config";

describe("loadConfig", () => {
  test("defaults run everything embedded on port 9991", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      role: "all",
      processes: 1,
      port: 9991,
      metricsPort: null,
      // Unauthenticated counts of everything: loopback unless an operator says otherwise.
      metricsBindAddress: "127.0.0.1",
      bindAddress: "0.0.0.0",
      databaseUrl: null,
      redisUrl: null,
      redisClusterNodes: null,
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
      METRICS_PORT: "9100",
      METRICS_BIND_ADDRESS: "0.0.0.0",
      BIND_ADDRESS: "127.0.0.1",
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
      metricsPort: 9100,
      metricsBindAddress: "0.0.0.0",
      bindAddress: "127.0.0.1",
      databaseUrl: "postgres://u@db:5432/chat",
      redisUrl: "redis://cache:6379/2",
      devMode: true,
      dataDir: "/var/lib/chat",
      externalHost: "chat.example.com",
      eventHeartbeatSeconds: 20,
    });
    expect(config.bootstrap.ownerPassword).toBe("long-enough");
  });

  test("DEV_MODE, which hands out any user's API key, starts only on a loopback address unless DEV_MODE_ALLOW_REMOTE says so", () => {
    for (const address of ["0.0.0.0", "::", "192.0.2.2", "fd00::2", "127.example.com"]) {
      expect(() => loadConfig({ DEV_MODE: "true", BIND_ADDRESS: address })).toThrow(ConfigError);
      expect(() => loadConfig({ DEV_MODE: "true", BIND_ADDRESS: address })).toThrow(/DEV_MODE_ALLOW_REMOTE=true/);
      expect(loadConfig({ DEV_MODE: "true", BIND_ADDRESS: address, DEV_MODE_ALLOW_REMOTE: "true" }).devMode).toBe(true);
      expect(loadConfig({ DEV_MODE: "false", BIND_ADDRESS: address }).devMode).toBe(false);
    }
    // The default address is every address.
    expect(() => loadConfig({ DEV_MODE: "true" })).toThrow(ConfigError);
    for (const address of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "::ffff:127.0.0.1"]) {
      expect(loadConfig({ DEV_MODE: "true", BIND_ADDRESS: address }).devMode).toBe(true);
    }
  });

  test("the default upload quota: 5 GiB an organization, 0 for none", () => {
    expect(loadConfig({}).uploads.realmQuotaBytes).toBe(5 * 1024 * 1024 * 1024);
    expect(loadConfig({ REALM_UPLOAD_QUOTA_MIB: "0" }).uploads.realmQuotaBytes).toBe(0);
  });

  test("a Redis Cluster instead of one Redis server: its seed nodes, as listed", () => {
    const config = loadConfig({ ROLE: "api", DATABASE_URL: "postgres://u@db:5432/chat", REDIS_CLUSTER_NODES: " redis-0:7000,redis-1:7001 ,10.0.0.3:7002" });
    expect(config).toMatchObject({ redisUrl: null, redisClusterNodes: ["redis-0:7000", "redis-1:7001", "10.0.0.3:7002"] });
    expect(sharedRedis(config)).toEqual({ clusterNodes: ["redis-0:7000", "redis-1:7001", "10.0.0.3:7002"] });
    expect(sharedRedis(loadConfig({ DATABASE_URL: "postgres://x/y", REDIS_URL: "redis://x:6379" }))).toEqual({ url: "redis://x:6379" });
    expect(sharedRedis(loadConfig({}))).toBeNull();
  });

  test("outgoing webhooks: Zulip's timeout and retries unless set; allowed hosts as listed", () => {
    expect(loadConfig({}).outgoingWebhooks).toEqual({ timeoutMs: 10_000, attempts: 4, backoffMs: 1000, maxResponseBytes: 1024 * 1024, concurrency: 64, concurrencyPerRealm: 16, maxBotsPerMessage: 20, allowedHosts: [] });
    const config = loadConfig({ OUTGOING_WEBHOOK_ALLOWED_HOSTS: " hooks.internal, 10.1.0.0/16,::1 ,[fd00::1]", OUTGOING_WEBHOOK_ATTEMPTS: "2", JOB_STALL_SECONDS: "5" });
    expect(config.outgoingWebhooks.allowedHosts).toEqual(["hooks.internal", "10.1.0.0/16", "::1", "[fd00::1]"]);
    expect(config.outgoingWebhooks.attempts).toBe(2);
    expect(loadConfig({ OUTGOING_WEBHOOK_CONCURRENCY_PER_REALM: "4", OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE: "5" }).outgoingWebhooks).toMatchObject({ concurrencyPerRealm: 4, maxBotsPerMessage: 5 });
    expect(config.jobStallSeconds).toBe(5);
  });

  test("rate limits are Zulip's unless set; forwarded headers are trusted from loopback unless set", () => {
    expect(loadConfig({})).toMatchObject({
      rateLimits: { enabled: true, userRequestsPerMinute: 200, ipRequestsPerMinute: 100, loginFailuresPerAccount: 5, loginFailuresPerIp: 50, loginFailureWindowSeconds: 1800 },
      trustedProxies: ["loopback"],
    });
    const config = loadConfig({
      RATE_LIMITING: "false",
      RATE_LIMIT_USER_REQUESTS_PER_MINUTE: "10",
      RATE_LIMIT_IP_REQUESTS_PER_MINUTE: "20",
      RATE_LIMIT_LOGIN_FAILURES_PER_ACCOUNT: "3",
      RATE_LIMIT_LOGIN_FAILURES_PER_IP: "6",
      RATE_LIMIT_LOGIN_WINDOW_SECONDS: "60",
      TRUSTED_PROXIES: " 10.0.0.1, 192.168.0.0/16 ,fd00::/8,LinkLocal",
    });
    expect(config.rateLimits).toEqual({ enabled: false, userRequestsPerMinute: 10, ipRequestsPerMinute: 20, loginFailuresPerAccount: 3, loginFailuresPerIp: 6, loginFailureWindowSeconds: 60 });
    expect(config.trustedProxies).toEqual(["10.0.0.1", "192.168.0.0/16", "fd00::/8", "linklocal"]);
    expect(loadConfig({ TRUSTED_PROXIES: "none" }).trustedProxies).toEqual([]);
  });

  test("LOG_LEVEL is one of the logger's levels", () => {
    expect(loadConfig({ LOG_LEVEL: "Debug" }).logLevel).toBe("debug");
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL must be one of error, warn, info, http, verbose, debug, silly, got "loud"/);
  });

  test("caps on active bots: 100 a user and 1,000 an organization unless set", () => {
    expect(loadConfig({}).bots).toEqual({ maxPerUser: 100, maxPerRealm: 1000 });
    expect(loadConfig({ MAX_BOTS_PER_USER: "5", MAX_BOTS_PER_REALM: "50" }).bots).toEqual({ maxPerUser: 5, maxPerRealm: 50 });
    expect(() => loadConfig({ MAX_BOTS_PER_USER: "0" })).toThrow(/MAX_BOTS_PER_USER must be between 1 and/);
    expect(() => loadConfig({ MAX_BOTS_PER_REALM: "many" })).toThrow(/MAX_BOTS_PER_REALM must be a whole number/);
  });

  test.each([
    [{ ROLE: "frontend" }, /ROLE must be one of all, api, events, worker/],
    [{ PORT: "http" }, /PORT must be a whole number/],
    [{ PORT: "70000" }, /PORT must be between 0 and 65535/],
    [{ DEV_MODE: "maybe" }, /DEV_MODE must be true or false/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL must start with postgres:\/\/ or postgresql:\/\//],
    [{ DATABASE_URL: "not a url" }, /DATABASE_URL is not a valid URL/],
    [{ REDIS_URL: "redis://x:6379" }, /REDIS_URL is set without DATABASE_URL/],
    [{ REDIS_CLUSTER_NODES: "x:7000" }, /REDIS_CLUSTER_NODES is set without DATABASE_URL/],
    [{ DATABASE_URL: "postgres://x/y", REDIS_URL: "redis://x:6379", REDIS_CLUSTER_NODES: "x:7000" }, /REDIS_URL and REDIS_CLUSTER_NODES are both set/],
    [{ DATABASE_URL: "postgres://x/y", REDIS_CLUSTER_NODES: "x:7000,redis://y:7001" }, /REDIS_CLUSTER_NODES must be a comma-separated list of host:port, got "redis:\/\/y:7001"/],
    [{ DATABASE_URL: "postgres://x/y", REDIS_CLUSTER_NODES: "x" }, /REDIS_CLUSTER_NODES must be .* got "x"/],
    [{ REDIS_PREFIX: "{chat}:" }, /REDIS_PREFIX must not contain { or }/],
    [{ ROLE: "api" }, /ROLE=api runs one tier of several processes/],
    [{ ROLE: "worker", DATABASE_URL: "postgres://x/y" }, /set DATABASE_URL and REDIS_URL/],
    [{ PROCESSES: "2" }, /PROCESSES above 1 runs several processes/],
    [{ PROCESSES: "0", DATABASE_URL: "postgres://x/y", REDIS_URL: "redis://x:6379" }, /PROCESSES must be between 1 and 256/],
    [{ BOOTSTRAP_OWNER_EMAIL: "nobody" }, /BOOTSTRAP_OWNER_EMAIL is not an email address/],
    [{ BOOTSTRAP_OWNER_PASSWORD: "short" }, /at least 8 characters/],
    [{ EVENT_HEARTBEAT_SECONDS: "0" }, /EVENT_HEARTBEAT_SECONDS must be between 1 and 600/],
    [{ RATE_LIMITING: "sometimes" }, /RATE_LIMITING must be true or false/],
    [{ RATE_LIMIT_USER_REQUESTS_PER_MINUTE: "0" }, /RATE_LIMIT_USER_REQUESTS_PER_MINUTE must be between 1 and/],
    [{ TRUSTED_PROXIES: "proxy.internal" }, /TRUSTED_PROXIES must be a comma-separated list .* got "proxy.internal"/],
    [{ TRUSTED_PROXIES: "10.0.0.0/33" }, /TRUSTED_PROXIES .* got "10.0.0.0\/33"/],
    [{ TRUSTED_PROXIES: "127.0.0.1," }, /TRUSTED_PROXIES .* got ""/],
    [{ TRUSTED_PROXIES: "true" }, /TRUSTED_PROXIES .* got "true"/],
    [{ OUTGOING_WEBHOOK_ALLOWED_HOSTS: "hooks.internal:8080" }, /OUTGOING_WEBHOOK_ALLOWED_HOSTS: "hooks.internal:8080" is not a host name/],
    [{ OUTGOING_WEBHOOK_ALLOWED_HOSTS: "http://hooks.internal" }, /OUTGOING_WEBHOOK_ALLOWED_HOSTS: "http:\/\/hooks.internal"/],
    [{ OUTGOING_WEBHOOK_ALLOWED_HOSTS: "10.0.0.0/33" }, /OUTGOING_WEBHOOK_ALLOWED_HOSTS: "10.0.0.0\/33"/],
    [{ OUTGOING_WEBHOOK_TIMEOUT_SECONDS: "0" }, /OUTGOING_WEBHOOK_TIMEOUT_SECONDS must be between 1 and 300/],
    [{ OUTGOING_WEBHOOK_CONCURRENCY_PER_REALM: "0" }, /OUTGOING_WEBHOOK_CONCURRENCY_PER_REALM must be between 1 and 10000/],
    [{ OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE: "0" }, /OUTGOING_WEBHOOK_MAX_BOTS_PER_MESSAGE must be between 1 and 1000/],
  ])("%j is refused with a message naming the variable", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
