/** One jest run covers every workspace; each test file gets its own database and Redis prefix. */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/apps", "<rootDir>/packages", "<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "commonjs" } }],
  },
  // Embedded servers start PGlite and migrate in a hook: on a loaded 2-core machine that took over 30 s.
  testTimeout: 60000,
  // Every response a test reads is checked against the API document (test/support/check-all-responses.ts).
  setupFilesAfterEnv: ["<rootDir>/test/support/check-all-responses.ts"],
  // The test servers serve the web client: built first when missing or stale (scripts/build-web.cjs).
  globalSetup: "<rootDir>/test/support/build-web-client.cjs",
  maxWorkers: 2,
};
