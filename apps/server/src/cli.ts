// `npm run cli -- <command>`: operator tasks against the configured database.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "@chat/config";
import {
  changeDeliveryEmail,
  createRealm,
  createUser,
  getRealmForSubdomain,
  getUserByDeliveryEmail,
  JsonableError,
  regenerateApiKey,
  ROLE_ADMINISTRATOR,
  ROLE_GUEST,
  ROLE_MEMBER,
  ROLE_OWNER,
} from "@chat/core";
import { openServices, type Services } from "./services.ts";

const USAGE = `usage: npm run cli -- <command> [options]

commands:
  create-realm --subdomain S --name N --owner-email E [--owner-name N] [--owner-password P]
  create-user --realm S --email E --name N [--password P] [--role owner|admin|member|guest]
  regenerate-api-key --realm S --email E
  change-user-email --realm S --email E --new-email N
  list-realms
  list-users --realm S

--realm names a realm by its subdomain; "" (or --realm=) is the root realm.
A password left out is generated and printed once.`;

const ROLE_NAMES: Record<string, number> = { owner: ROLE_OWNER, admin: ROLE_ADMINISTRATOR, member: ROLE_MEMBER, guest: ROLE_GUEST };

class UsageError extends Error {}

function required(values: Record<string, string | undefined>, name: string): string {
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

type Out = (text: string) => void;

export async function runCli(argv: string[], services: Services, out: Out): Promise<void> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: Object.fromEntries(
      ["subdomain", "name", "owner-email", "owner-name", "owner-password", "realm", "email", "new-email", "password", "role"].map((o) => [o, { type: "string" as const }]),
    ),
    strict: true,
  });
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
      const realm = await getRealmForSubdomain(prisma, required(values, "realm"));
      const roleName = values.role ?? "member";
      const role = ROLE_NAMES[roleName];
      if (role === undefined) throw new UsageError(`--role must be one of ${Object.keys(ROLE_NAMES).join(", ")}`);
      const password = values.password ?? randomBytes(12).toString("base64url");
      const user = await services.actions.run(realm.id, (tx, events) =>
        createUser(tx, events, services.ctx, realm, { email: required(values, "email"), fullName: required(values, "name"), password, role }),
      );
      out(`created user ${user.id} ${user.delivery_email} (${roleName})\napi key: ${user.api_key}\n`);
      if (!values.password) out(`password: ${password}\n`);
      return;
    }
    case "regenerate-api-key": {
      const realm = await getRealmForSubdomain(prisma, required(values, "realm"));
      const user = await getUserByDeliveryEmail(prisma, realm.id, required(values, "email"));
      if (!user) throw new UsageError(`no user ${values.email} in realm "${realm.string_id}"`);
      const apiKey = await services.actions.run(realm.id, (tx, events) => regenerateApiKey(tx, events, user));
      out(`api key: ${apiKey}\n`);
      return;
    }
    case "change-user-email": {
      const realm = await getRealmForSubdomain(prisma, required(values, "realm"));
      const user = await getUserByDeliveryEmail(prisma, realm.id, required(values, "email"));
      if (!user) throw new UsageError(`no user ${values.email} in realm "${realm.string_id}"`);
      const changed = await services.actions.run(realm.id, (tx, events) => changeDeliveryEmail(tx, events, services.ctx, user, required(values, "new-email")));
      out(`user ${changed.id} is now ${changed.delivery_email}\n`);
      return;
    }
    case "list-realms": {
      const realms = await prisma.realm.findMany({ orderBy: { id: "asc" }, include: { _count: { select: { users: true } } } });
      out(table(realms.map((r) => ({ id: r.id, subdomain: r.string_id === "" ? '""' : r.string_id, name: r.name, users: r._count.users, deactivated: r.deactivated }))));
      return;
    }
    case "list-users": {
      const realm = await getRealmForSubdomain(prisma, required(values, "realm"));
      const users = await prisma.userProfile.findMany({ where: { realm_id: realm.id }, orderBy: { id: "asc" } });
      const roleName = (role: number) => Object.entries(ROLE_NAMES).find(([, r]) => r === role)?.[0] ?? String(role);
      out(table(users.map((u) => ({ id: u.id, email: u.delivery_email, name: u.full_name, role: roleName(u.role), bot: u.is_bot, active: u.is_active }))));
      return;
    }
    default:
      throw new UsageError(command ? `unknown command: ${command}` : "no command given");
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "help") {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const services = await openServices(loadConfig(), { migrate: true });
  try {
    await runCli(argv, services, (text) => process.stdout.write(text));
    return 0;
  } finally {
    await services.close();
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
        process.stderr.write(`${error.message}\n\n${USAGE}\n`);
        process.exit(2);
      }
      const label = error instanceof ConfigError ? "Configuration error" : "Error";
      const message = error instanceof JsonableError || error instanceof ConfigError ? error.message : String(error?.message ?? error);
      process.stderr.write(`${label}: ${message}\n`);
      process.exit(1);
    },
  );
}
