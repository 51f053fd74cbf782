// `npm run cluster` on a fresh machine: its Postgres has no `chat` database yet. The cluster
// creates it through the server's maintenance database, with the same credentials, and only when
// it is missing; an operator who cannot create databases is told what to run instead.
import { Client, type ClientConfig } from "pg";

/** How long to wait for Postgres to answer before saying it cannot be reached. */
const CONNECT_TIMEOUT_MS = 5000;
/** Databases every Postgres server has, to connect to when the target does not exist yet. */
const MAINTENANCE_DATABASES = ["postgres", "template1"];

/** A database URL with its password hidden, for messages and summaries. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(DATABASE_URL is not a URL)";
  }
}

/** A Postgres identifier as SQL text: always quoted, so any name (spaces, quotes, capitals) is taken as written. */
export function quoteIdentifier(name: string): string {
  if (name.includes("\0")) throw new Error("a Postgres identifier cannot contain NUL");
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The database a URL names, or null when it names none (Postgres then uses the user's name).
 * Decoded as pg decodes it (decodeURI), so the name created is the name connected to.
 */
export function databaseName(url: string): string | null {
  const name = decodeURI(new URL(url).pathname.slice(1));
  return name === "" ? null : name;
}

interface PgError extends Error {
  code?: string;
}

function describeUnreachable(url: string, error: PgError): string {
  const parsed = new URL(url);
  const where = `${parsed.hostname || "localhost"}:${parsed.port || "5432"}`;
  if (error.code === "28P01" || error.code === "28000") {
    return `Postgres at ${where} refused the credentials of ${redactUrl(url)}: ${error.message}. Fix the user or password in DATABASE_URL.`;
  }
  return `cannot reach Postgres at ${where} (${error.message}): start it, or set DATABASE_URL to a server that runs (now ${redactUrl(url)}).`;
}

async function connect(config: ClientConfig): Promise<Client> {
  const client = new Client({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection that breaks later must not crash the process through an unhandled 'error'.
  client.on("error", () => {});
  await client.connect();
  return client;
}

/**
 * Makes sure the database `url` names exists: "exists" when it could be opened, "created" when
 * it was missing and this created it. Throws an Error with a message for the operator when the
 * server cannot be reached, the credentials are refused, or the user may not create databases.
 */
export async function ensureDatabase(url: string): Promise<"exists" | "created"> {
  const name = databaseName(url);
  let target: Client;
  try {
    target = await connect({ connectionString: url });
  } catch (error) {
    if ((error as PgError).code !== "3D000" || name === null) throw new Error(describeUnreachable(url, error as PgError));
    return createDatabase(url, name);
  }
  await target.end();
  return "exists";
}

async function createDatabase(url: string, name: string): Promise<"exists" | "created"> {
  let admin: Client | null = null;
  let lastError: PgError | null = null;
  for (const maintenance of MAINTENANCE_DATABASES) {
    const maintenanceUrl = new URL(url);
    maintenanceUrl.pathname = `/${maintenance}`;
    try {
      admin = await connect({ connectionString: maintenanceUrl.toString() });
      break;
    } catch (error) {
      lastError = error as PgError;
      // Only a missing maintenance database is worth trying the next one for.
      if (lastError.code !== "3D000") break;
    }
  }
  if (admin === null) throw new Error(`the database "${name}" does not exist, and ${describeUnreachable(url, lastError!)}`);
  const user = admin.user ?? "(default user)";
  try {
    // Another cluster may have created it since we looked: that is as good.
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount !== 0) return "exists";
    await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
    return "created";
  } catch (error) {
    const code = (error as PgError).code;
    if (code === "42P04") return "exists";
    if (code === "42501") {
      throw new Error(
        `the database "${name}" does not exist, and the user "${user}" may not create databases (${(error as Error).message}). ` +
          `Create it as a superuser (createdb -O ${quoteIdentifier(user)} ${quoteIdentifier(name)}, or CREATE DATABASE ${quoteIdentifier(name)} OWNER ${quoteIdentifier(user)};), ` +
          `or give that user CREATEDB, then start the cluster again.`,
      );
    }
    throw new Error(`could not create the database "${name}" on ${redactUrl(url)}: ${(error as Error).message}`);
  } finally {
    await admin.end();
  }
}
