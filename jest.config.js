/** One jest run covers every workspace; each test file gets its own database and Redis prefix. */
module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/apps", "<rootDir>/packages", "<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "commonjs" } }],
  },
  testTimeout: 30000,
  maxWorkers: 2,
};
