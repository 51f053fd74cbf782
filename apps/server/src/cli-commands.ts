// The operator CLI's commands, run against open Services: by `npm run cli` itself when no server
// owns the data folder, or inside the running server when one does (operator-channel.ts), so that
// its changes reach connected clients as events.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { serverVersion } from "@chat/config";
import {
  changeDeliveryEmail,
  createPasswordResetLink,
  createRealm,
  createUser,
  deactivateUser,
  getUserByDeliveryEmail,
  reactivateUser,
  regenerateApiKey,
  setUserPassword,
  hashNewPassword,
  ROLE_ADMINISTRATOR,
  ROLE_GUEST,
  ROLE_MEMBER,
  ROLE_OWNER,
  updateUser,
  type Actor,
  type Realm,
  type UserProfile,
} from "@chat/core";
import { createBackup, describeBackup } from "./backup.ts";
import { importRealmFromFile } from "./realm-import-archive.ts";
import type { Services } from "./services.ts";

export const USAGE = `usage: npm run cli -- <command> [options]

organizations and users:
  create-realm --subdomain S --name N --owner-email E [--owner-name N] [--owner-password P]
  create-user [--realm S] --email E --name N [--password P] [--role owner|admin|member|guest]
  list-realms
  list-users [--realm S]
  change-role [--realm S] --email E --role owner|admin|member|guest
  grant-create-users [--realm S] --email E [--revoke]
      lets an administrator create accounts with POST /users (an organization's first owner may)
  deactivate-user [--realm S] --email E
  reactivate-user [--realm S] --email E
  change-user-email [--realm S] --email E --new-email N
  regenerate-api-key [--realm S] --email E

passwords:
  set-password [--realm S] --email E [--password-stdin]
      asks for the new password (twice), or reads one line from standard input
  password-reset-link [--realm S] --email E [--scheme http|https]
      prints a link, valid for 24 hours and once, where the user sets a new password
      (https unless EXTERNAL_HOST is this machine; --scheme says otherwise)

data:
  backup FILE          the database and uploaded files, in one file
  import-realm FILE --subdomain S [--name N]
                       a new organization from an export (POST /export/realm's, or Zulip's
                       manage.py export; a .tar.gz or its unpacked folder); its users set their
                       passwords through a password reset
  restore FILE [--force]
                       replaces this server's data with a backup (the server must be stopped;
                       --force: on Postgres, even while other sessions are connected)

  version

--cluster uses the database and Redis of the last \`npm run cluster\` on this DATA_DIR (the running
one's are used anyway when DATABASE_URL is unset).
--realm names an organization by its subdomain; "" (or --realm=) is the root organization. It may
be left out when there is only one. A password left out of create-* is generated and printed once.
While a server runs on the embedded database, these commands are carried out by that server.`;

export const ROLE_NAMES: Record<string, number> = { owner: ROLE_OWNER, admin: ROLE_ADMINISTRATOR, member: ROLE_MEMBER, guest: ROLE_GUEST };

/** A mistake in the command line: reported with the usage text and exit code 2. */
export class UsageError extends Error {}

/** A command that cannot be done as asked (no such user, already deactivated): exit code 1. */
export class CommandError extends Error {}

const COMMANDS = new Set([
  "create-realm", "create-user", "list-realms", "list-users", "change-role", "grant-create-users", "deactivate-user", "reactivate-user", "change-user-email",
  "regenerate-api-key", "set-password", "password-reset-link", "backup", "restore", "import-realm", "version",
]);

/** What a command may need beyond its arguments, gathered where the operator is (cli.ts). */
export interface CliInput {
  /** set-password: the new password, asked for or read from standard input. */
  password?: string;
}

export interface CliIo {
  out: (text: string) => void;
  input: CliInput;
}

const OPTIONS = ["subdomain", "name", "owner-email", "owner-name", "owner-password", "realm", "email", "new-email", "password", "role", "scheme"] as const;
const FLAGS = ["password-stdin", "force", "revoke"] as const;

export interface ParsedCommand {
  command: string;
  values: Partial<Record<(typeof OPTIONS)[number], string>> & Partial<Record<(typeof FLAGS)[number], boolean>>;
  positionals: string[];
}

/** Parses a command line, throwing UsageError for anything the command does not take. */
export function parseCommand(argv: string[]): ParsedCommand {
  const [command, ...rest] = argv;
  if (!command) throw new UsageError("no command given");
  if (!COMMANDS.has(command)) throw new UsageError(`unknown command: ${command}`);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...Object.fromEntries(OPTIONS.map((o) => [o, { type: "string" as const }])), ...Object.fromEntries(FLAGS.map((f) => [f, { type: "boolean" as const }])) },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const positionals = parsed.positionals;
  const takesFile = command === "backup" || command === "restore" || command === "import-realm";
  if (takesFile ? positionals.length !== 1 : positionals.length !== 0) {
    throw new UsageError(takesFile ? `${command} takes one FILE` : `unexpected argument: ${positionals[0]}`);
  }
  return { command, values: parsed.values as ParsedCommand["values"], positionals };
}

function required(values: ParsedCommand["values"], name: (typeof OPTIONS)[number]): string {
  const value = values[name];
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return "(none)\n";
  const keys = Object.keys(rows[0]);
  const widths = keys.map((k) => Math.max(k.length, ...rows.map((r) => String(r[k]).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
  return [line(keys), ...rows.map((r) => line(keys.map((k) => String(r[k]))))].join("\n") + "\n";
}

function roleName(role: number): string {
  return Object.entries(ROLE_NAMES).find(([, r]) => r === role)?.[0] ?? String(role);
}

function parseRole(name: string): number {
  const role = ROLE_NAMES[name];
  if (role === undefined) throw new UsageError(`--role must be one of ${Object.keys(ROLE_NAMES).join(", ")}`);
  return role;
}

/** The organization --realm names, or the only one there is when it is left out. */
async function chooseRealm(services: Services, values: ParsedCommand["values"]): Promise<Realm> {
  const { prisma } = services.db;
  if (values.realm !== undefined) {
    const realm = await prisma.realm.findUnique({ where: { string_id: values.realm } });
    if (!realm) throw new CommandError(`no organization has the subdomain "${values.realm}" (list-realms shows them)`);
    return realm;
  }
  const realms = await prisma.realm.findMany({ orderBy: { id: "asc" }, take: 2 });
  if (realms.length === 1) return realms[0];
  throw new CommandError(realms.length === 0 ? "there is no organization yet: create-realm makes one" : "there are several organizations: --realm names one (list-realms shows them)");
}

async function chooseUser(services: Services, values: ParsedCommand["values"]): Promise<{ realm: Realm; user: UserProfile }> {
  const realm = await chooseRealm(services, values);
  const email = required(values, "email");
  const user = await getUserByDeliveryEmail(services.db.prisma, realm.id, email);
  if (!user) throw new CommandError(`no user ${email} in the organization "${realm.string_id}" (list-users shows them)`);
  return { realm, user };
}

/**
 * The operator acts with an owner's rights on whatever it changes (as Zulip's management commands
 * do), under the same rules that keep an organization manageable (it keeps an owner and an
 * administrator). An id no user has, so no rule takes it for the target acting on itself.
 */
function operatorActor(realm: Realm, target: UserProfile): Actor {
  return { ...target, id: -1, role: ROLE_OWNER, is_bot: false, bot_owner_id: null, is_active: true, realm };
}

/** localhost, a loopback address, or either with a port: links to it are http. */
function isThisMachine(externalHost: string): boolean {
  const host = externalHost.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Commands that need the data folder to themselves, never run inside a server. */
export const OFFLINE_COMMANDS = new Set(["restore"]);

export async function runCli(argv: string[], services: Services, io: CliIo): Promise<void> {
  const { command, values } = parseCommand(argv);
  const { out } = io;
  const { prisma } = services.db;
  switch (command) {
    case "create-realm": {
      const password = values["owner-password"] ?? randomBytes(12).toString("base64url");
      const { realm, owner } = await services.actions.run(0, (tx, events) =>
        createRealm(tx, events, services.ctx, {
          subdomain: required(values, "subdomain"),
          name: required(values, "name"),
          owner: { email: required(values, "owner-email"), fullName: values["owner-name"] ?? "Owner", password },
        }),
      );
      out(`created realm ${realm.id} "${realm.name}" at subdomain "${realm.string_id}"\nowner: ${owner.email}\napi key: ${owner.api_key}\n`);
      if (!values["owner-password"]) out(`password: ${password}\n`);
      return;
    }
    case "create-user": {
      const realm = await chooseRealm(services, values);
      const roleLabel = values.role ?? "member";
      const role = parseRole(roleLabel);
      const password = values.password ?? randomBytes(12).toString("base64url");
      const user = await services.actions.run(realm.id, (tx, events) =>
        createUser(tx, events, services.ctx, realm, { email: required(values, "email"), fullName: required(values, "name"), password, role }),
      );
      out(`created user ${user.id} ${user.delivery_email} (${roleLabel})\napi key: ${user.api_key}\n`);
      if (!values.password) out(`password: ${password}\n`);
      return;
    }
    case "regenerate-api-key": {
      const { realm, user } = await chooseUser(services, values);
      const apiKey = await services.actions.run(realm.id, (tx, events) => regenerateApiKey(tx, events, user));
      out(`api key: ${apiKey}\n`);
      return;
    }
    case "change-user-email": {
      const { realm, user } = await chooseUser(services, values);
      const changed = await services.actions.run(realm.id, (tx, events) => changeDeliveryEmail(tx, events, services.ctx, user, required(values, "new-email")));
      out(`user ${changed.id} is now ${changed.delivery_email}\n`);
      return;
    }
    case "change-role": {
      const role = parseRole(required(values, "role"));
      const { realm, user } = await chooseUser(services, values);
      if (user.is_bot) throw new CommandError(`${user.delivery_email} is a bot: a bot's role is its owner's to manage`);
      await services.actions.run(realm.id, (tx, events) => updateUser(tx, events, operatorActor(realm, user), user, { role }));
      out(`${user.delivery_email} is now ${roleName(role)} (was ${roleName(user.role)})\n`);
      return;
    }
    case "grant-create-users": {
      const { user } = await chooseUser(services, values);
      if (user.is_bot) throw new CommandError(`${user.delivery_email} is a bot: bots do not create accounts`);
      const grant = !values.revoke;
      await prisma.userProfile.update({ where: { id: user.id }, data: { can_create_users: grant } });
      out(`${user.delivery_email} ${grant ? "may" : "may no longer"} create accounts with POST /users${grant && user.role > ROLE_ADMINISTRATOR ? " (once an administrator)" : ""}\n`);
      return;
    }
    case "deactivate-user": {
      const { realm, user } = await chooseUser(services, values);
      if (!user.is_active) throw new CommandError(`${user.delivery_email} is already deactivated`);
      await services.actions.run(realm.id, (tx, events) => deactivateUser(tx, events, operatorActor(realm, user), user));
      out(`deactivated ${user.delivery_email}; their sessions and event queues have ended\n`);
      return;
    }
    case "reactivate-user": {
      const { realm, user } = await chooseUser(services, values);
      if (user.is_active) throw new CommandError(`${user.delivery_email} is already active`);
      await services.actions.run(realm.id, (tx, events) => reactivateUser(tx, events, operatorActor(realm, user), user, services.ctx.bots));
      out(`reactivated ${user.delivery_email}\n`);
      return;
    }
    case "list-realms": {
      const realms = await prisma.realm.findMany({ orderBy: { id: "asc" }, include: { _count: { select: { users: true } } } });
      out(table(realms.map((r) => ({ id: r.id, subdomain: r.string_id === "" ? '""' : r.string_id, name: r.name, users: r._count.users, deactivated: r.deactivated }))));
      return;
    }
    case "list-users": {
      const realm = await chooseRealm(services, values);
      const users = await prisma.userProfile.findMany({ where: { realm_id: realm.id }, orderBy: { id: "asc" } });
      out(table(users.map((u) => ({ id: u.id, email: u.delivery_email, name: u.full_name, role: roleName(u.role), bot: u.is_bot, active: u.is_active }))));
      return;
    }
    case "set-password": {
      const { realm, user } = await chooseUser(services, values);
      const password = io.input.password;
      if (password === undefined) throw new UsageError("set-password reads the new password from the terminal or standard input");
      const hashed = await hashNewPassword(password);
      await services.actions.run(realm.id, (tx) => setUserPassword(tx, user, hashed));
      out(`set a new password for ${user.delivery_email}\n`);
      return;
    }
    case "password-reset-link": {
      const { realm, user } = await chooseUser(services, values);
      const scheme = values.scheme ?? (isThisMachine(services.config.externalHost) ? "http" : "https");
      if (scheme !== "http" && scheme !== "https") throw new UsageError("--scheme must be http or https");
      const link = await services.actions.run(realm.id, (tx) => createPasswordResetLink(tx, { externalHost: services.config.externalHost, protocol: scheme }, realm, user));
      out(`${link.url}\n(valid once, until ${link.expiresAt.toISOString()})\n`);
      return;
    }
    case "backup": {
      const result = await createBackup(services, parseCommand(argv).positionals[0]);
      out(describeBackup(result));
      return;
    }
    case "import-realm": {
      const result = await importRealmFromFile(services, parseCommand(argv).positionals[0], { subdomain: required(values, "subdomain"), name: values.name });
      out(
        `imported realm ${result.realm.id} "${result.realm.name}" at subdomain "${result.realm.string_id}": ${result.users} users, ${result.streams} streams, ${result.messages} messages, ${result.files} files\n` +
          "users have no password: each sets one through a password reset (password-reset-link prints one)\n",
      );
      return;
    }
    case "restore":
      // cli.ts runs it with no services open: they would hold the very data it replaces.
      throw new CommandError("restore runs without a server: stop the server, then run it again");
    case "version":
      out(`${serverVersion()}\n`);
      return;
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}
