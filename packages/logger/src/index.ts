import winston from "winston";

/** One structured logger per process; JSON in production, readable lines on a terminal. */
export const logger = winston.createLogger({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "warn" : "info"),
  format: process.stdout.isTTY
    ? winston.format.combine(winston.format.colorize(), winston.format.simple())
    : winston.format.combine(winston.format.timestamp(), winston.format.json()),
  transports: [new winston.transports.Console({ stderrLevels: ["error", "warn"] })],
});

export type Logger = typeof logger;
