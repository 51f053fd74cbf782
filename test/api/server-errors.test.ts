// What a request that fails on the server's side answers (packages/http/src/app.ts): an
// unreachable Postgres or Redis is a 503 with Retry-After, anything else a 500; neither carries
// the client's BAD_REQUEST code or a stack trace. The errors below have the shapes pg, Prisma's
// adapter and ioredis were seen to throw when the services were stopped (test/e2e/outages.test.ts).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Router } from "express";
import request from "supertest";
import { isOutageError } from "@chat/core";
import { createHttpApp } from "@chat/http";
import { responsesOutsideTheApiDocument } from "../support/check-all-responses.ts";

// Its apps of made-up routes are not the API the document describes (ApiClient still checks its own).
responsesOutsideTheApiDocument();

function errorWith(message: string, fields: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), fields);
}

const OUTAGES: Record<string, unknown> = {
  "pg: connection refused": errorWith("connect ECONNREFUSED 127.0.0.1:5432", { errno: -111, code: "ECONNREFUSED", syscall: "connect" }),
  "pg: Postgres killed mid-query": errorWith("Connection terminated unexpectedly"),
  "pg: no pooled connection in time": errorWith("timeout exceeded when trying to connect"),
  "Prisma: raw query on a session Postgres ended (pg_ctl stop -m fast)": errorWith("Raw query failed. Code: `57P01`.", {
    name: "PrismaClientKnownRequestError",
    code: "P2010",
    meta: { driverAdapterError: errorWith("terminating connection due to administrator command", { cause: { kind: "postgres", code: "57P01", severity: "FATAL" } }) },
  }),
  "Prisma: raw query while Postgres starts up": errorWith("Raw query failed. Code: `N/A`.", {
    code: "P2010",
    meta: { driverAdapterError: errorWith("DatabaseNotReachable", { cause: { kind: "DatabaseNotReachable", host: "127.0.0.1", port: 5432 } }) },
  }),
  "Prisma: can't reach the server": errorWith("Can't reach database server at 127.0.0.1:5432", { code: "P1001" }),
  "Prisma: Postgres shutting down": errorWith("Database error. Code: `57P03`.", { meta: { driverAdapterError: errorWith("x", { cause: { kind: "postgres", code: "57P03" } }) } }),
  "ioredis: Redis paused (commandTimeout)": errorWith("Command timed out"),
  "ioredis: Redis down (maxRetriesPerRequest)": errorWith("Reached the max retries per request limit (which is 1). Refer to \"maxRetriesPerRequest\" option for details.", { name: "MaxRetriesPerRequestError" }),
  "ioredis: connection closed": errorWith("Connection is closed."),
};

const NOT_OUTAGES: Record<string, unknown> = {
  "a bug": new TypeError("Cannot read properties of undefined (reading 'id')"),
  "Prisma: unique violation": errorWith("Unique constraint failed", { code: "P2002" }),
  "Prisma: raw query with a syntax error": errorWith("Raw query failed. Code: `42601`.", {
    code: "P2010",
    meta: { driverAdapterError: errorWith("syntax error", { cause: { kind: "postgres", code: "42601" } }) },
  }),
  "a Redis reply error": errorWith("WRONGTYPE Operation against a key holding the wrong kind of value"),
  "not an error": "Command timed out",
};

describe("isOutageError", () => {
  test.each(Object.keys(OUTAGES))("%s is an outage", (name) => {
    expect(isOutageError(OUTAGES[name])).toBe(true);
  });
  test.each(Object.keys(NOT_OUTAGES))("%s is not", (name) => {
    expect(isOutageError(NOT_OUTAGES[name])).toBe(false);
  });
});

describe("the error handler", () => {
  let server: http.Server;
  let baseUrl: string;
  let thrown: unknown;

  beforeAll(async () => {
    const api = Router();
    api.get("/fail", () => {
      throw thrown;
    });
    server = http.createServer(createHttpApp({ api }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test("an unreachable service: 503 SERVICE_UNAVAILABLE with Retry-After", async () => {
    for (const error of Object.values(OUTAGES)) {
      thrown = error;
      const res = await request(baseUrl).get("/api/v1/fail");
      expect([res.status, res.headers["retry-after"], res.body]).toEqual([503, "5", { result: "error", msg: "Service temporarily unavailable", code: "SERVICE_UNAVAILABLE" }]);
    }
  });

  test("anything else: 500 INTERNAL_SERVER_ERROR, without the error's text", async () => {
    thrown = NOT_OUTAGES["a bug"];
    const res = await request(baseUrl).get("/api/v1/fail");
    expect([res.status, res.headers["retry-after"], res.body]).toEqual([500, undefined, { result: "error", msg: "Internal server error", code: "INTERNAL_SERVER_ERROR" }]);
  });
});
