import winston from "winston";

/** One structured logger per process; JSON in production, readable lines on a terminal. */
export const logger = winston.createLogger({
  level: process.env.LOG_LEVEL?.trim().toLowerCase() || (process.env.NODE_ENV === "test" ? "warn" : "info"),
  format: process.stdout.isTTY
    ? winston.format.combine(winston.format.colorize(), winston.format.simple())
    : winston.format.combine(winston.format.timestamp(), winston.format.json()),
  transports: [new winston.transports.Console({ stderrLevels: ["error", "warn"] })],
});

export type Logger = typeof logger;

let httpLevelOf: string | undefined;
let httpEnabled = false;

/**
 * Whether `logger.http` lines are written (LOG_LEVEL=http or finer): asked for every request.
 * winston's isLevelEnabled builds an array of its transports each time it is asked, so the answer
 * is kept until the logger's level changes (its transports are fixed at creation).
 */
export function httpLogging(): boolean {
  if (httpLevelOf !== logger.level) {
    httpLevelOf = logger.level;
    httpEnabled = logger.isLevelEnabled("http");
  }
  return httpEnabled;
}
