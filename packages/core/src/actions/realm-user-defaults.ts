// The personal settings an organization's new users start with (Zulip's RealmUserDefault,
// feature level 95): /register's realm_user_settings_defaults, PATCH /realm/user_settings_defaults
// (administrators), and `realm_user_settings_defaults` events to everyone. Stored in
// realm_user_default, one row per realm made at the first change (its columns are user_profile's,
// with its defaults); twenty_four_hour_time is the realm's default_twenty_four_hour_time, which
// new users already start from, and email_address_visibility the realm's email_address_visibility.
import { Prisma, type PrismaClient, type Tx } from "@chat/db";
import type { Realm } from "../models.ts";
import type { EventRecorder } from "../events.ts";
import type { Actor } from "../models.ts";
import { AdministratorRequiredError, JsonableError } from "../errors.ts";
import { isAdmin } from "../lib/roles.ts";
import { checkSettingValue, PERSONAL_SETTINGS_BY_NAME, PERSONAL_SETTINGS, type PersonalSetting, type SettingValue } from "../lib/personal-settings.ts";
import { activeUserIds } from "../queries/users.ts";
import { EMAIL_ADDRESS_VISIBILITY_VALUES } from "../lib/email-visibility.ts";

/**
 * Personal settings an organization does not choose for its users: their language (the realm's
 * default_language), timezone, and, as Zulip, the security and marketing emails and the consent
 * to private data exports.
 */
const NOT_DEFAULTED = new Set(["default_language", "timezone", "enable_login_emails", "enable_marketing_emails", "allow_private_data_export"]);
/** Kept in the realm's row, not realm_user_default. */
const REALM_COLUMNS: Record<string, string> = { twenty_four_hour_time: "default_twenty_four_hour_time" };

/** The settings realm_user_settings_defaults has, in PERSONAL_SETTINGS order. */
export const REALM_USER_DEFAULT_SETTINGS: readonly PersonalSetting[] = PERSONAL_SETTINGS.filter((setting) => !NOT_DEFAULTED.has(setting.name));

type Reader = Pick<PrismaClient, "$queryRaw">;

/** The realm's row, or the columns' defaults when it has none. */
async function storedDefaults(db: Reader, realmId: number): Promise<Record<string, SettingValue>> {
  const rows = await db.$queryRaw<Array<Record<string, SettingValue>>>`SELECT * FROM realm_user_default WHERE realm_id = ${realmId}`;
  return rows[0] ?? (await columnDefaults(db));
}

let cachedColumnDefaults: Promise<Record<string, SettingValue>> | null = null;

/** realm_user_default's column defaults (the schema's), read once a process. */
function columnDefaults(db: Reader): Promise<Record<string, SettingValue>> {
  if (cachedColumnDefaults === null) {
    cachedColumnDefaults = readColumnDefaults(db);
    cachedColumnDefaults.catch(() => {
      cachedColumnDefaults = null;
    });
  }
  return cachedColumnDefaults;
}

/** Every column's default is a constant: true or false, an integer, or a quoted text. */
async function readColumnDefaults(db: Reader): Promise<Record<string, SettingValue>> {
  const rows = await db.$queryRaw<Array<{ column_name: string; column_default: string | null; data_type: string }>>`
    SELECT column_name, column_default, data_type FROM information_schema.columns WHERE table_name = 'realm_user_default' AND table_schema = current_schema()`;
  const values: Record<string, SettingValue> = {};
  for (const row of rows) {
    if (row.column_default === null) continue;
    const text = row.column_default.replace(/::[a-z ]+$/, "");
    if (row.data_type === "boolean") values[row.column_name] = text === "true";
    else if (row.data_type === "integer") values[row.column_name] = Number(text);
    else values[row.column_name] = text.replace(/^'(.*)'$/s, "$1").replace(/''/g, "'");
  }
  return values;
}

/** Every setting's value for new users of the realm, by Zulip 9.0's names. */
export async function realmUserDefaultValues(db: Reader, realm: Pick<Realm, "id" | "default_twenty_four_hour_time">): Promise<Record<string, SettingValue>> {
  const row = await storedDefaults(db, realm.id);
  const realmRow = realm as unknown as Record<string, SettingValue>;
  return Object.fromEntries(REALM_USER_DEFAULT_SETTINGS.map((setting) => [setting.name, setting.name in REALM_COLUMNS ? realmRow[REALM_COLUMNS[setting.name]] : row[setting.column]]));
}

/** The user_profile columns a new user of the realm starts with (insertUser). */
export async function newUserSettingColumns(db: Reader, realm: Pick<Realm, "id" | "default_twenty_four_hour_time">): Promise<Record<string, SettingValue>> {
  const values = await realmUserDefaultValues(db, realm);
  return Object.fromEntries(REALM_USER_DEFAULT_SETTINGS.map((setting) => [setting.column, values[setting.name]]));
}

/** Requested values by Zulip 9.0's names (undefined: not sent). */
export type RealmUserDefaultsRequest = Record<string, SettingValue | undefined>;

/**
 * PATCH /realm/user_settings_defaults (Zulip's update_realm_user_settings_defaults): administrators
 * only; every value is checked before anything is written, and each change is announced.
 */
export async function updateRealmUserDefaults(tx: Tx, events: EventRecorder, actor: Actor, request: RealmUserDefaultsRequest): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const requested: Array<{ setting: PersonalSetting; value: SettingValue }> = [];
  for (const setting of REALM_USER_DEFAULT_SETTINGS) {
    const value = request[setting.name];
    if (value === undefined) continue;
    checkSettingValue(setting, value);
    requested.push({ setting, value });
  }
  // New users' email_address_visibility (feature level 163) is the realm's column, which Zulip 3.x
  // clients know as the organization's setting; changing the default changes nobody's own.
  const visibility = request.email_address_visibility;
  if (visibility !== undefined && !EMAIL_ADDRESS_VISIBILITY_VALUES.includes(visibility as number)) {
    throw new JsonableError("Invalid email_address_visibility", { extra: { var_name: "email_address_visibility" } });
  }
  if (visibility !== undefined) {
    const [locked] = await tx.$queryRaw<Array<{ email_address_visibility: number }>>`SELECT email_address_visibility FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
    if (locked.email_address_visibility !== visibility) {
      await tx.$executeRaw`UPDATE realm SET email_address_visibility = ${visibility} WHERE id = ${actor.realm_id}`;
      const everyone = await activeUserIds(tx, actor.realm_id);
      events.send({ type: "realm_user_settings_defaults", op: "update", property: "email_address_visibility", value: visibility }, everyone);
    }
  }
  if (requested.length === 0) return;
  // The realm's row locked: concurrent changes are compared in turn.
  const [realm] = await tx.$queryRaw<Array<Record<string, SettingValue>>>`SELECT * FROM realm WHERE id = ${actor.realm_id} FOR UPDATE`;
  await tx.$executeRaw`INSERT INTO realm_user_default (realm_id) VALUES (${actor.realm_id}) ON CONFLICT (realm_id) DO NOTHING`;
  const [row] = await tx.$queryRaw<Array<Record<string, SettingValue>>>`SELECT * FROM realm_user_default WHERE realm_id = ${actor.realm_id}`;
  const changed = requested.filter(({ setting, value }) => (setting.name in REALM_COLUMNS ? realm[REALM_COLUMNS[setting.name]] : row[setting.column]) !== value);
  if (changed.length === 0) return;
  const stored = changed.filter(({ setting }) => !(setting.name in REALM_COLUMNS));
  if (stored.length > 0) {
    const sets = Prisma.join(stored.map(({ setting, value }) => Prisma.sql`${Prisma.raw(`"${setting.column}"`)} = ${value}`));
    await tx.$executeRaw`UPDATE realm_user_default SET ${sets} WHERE realm_id = ${actor.realm_id}`;
  }
  const users = await activeUserIds(tx, actor.realm_id);
  for (const { setting, value } of changed) {
    if (setting.name in REALM_COLUMNS) {
      await tx.$executeRaw`UPDATE realm SET ${Prisma.raw(`"${REALM_COLUMNS[setting.name]}"`)} = ${value} WHERE id = ${actor.realm_id}`;
      // Zulip 3.x clients follow it as the realm's setting.
      events.send({ type: "realm", op: "update", property: REALM_COLUMNS[setting.name], value }, users);
    }
    events.send({ type: "realm_user_settings_defaults", op: "update", property: setting.name, value }, users);
  }
}

/** Whether a parameter name is one of realm_user_settings_defaults' settings. */
export function isRealmUserDefaultSetting(name: string): boolean {
  return PERSONAL_SETTINGS_BY_NAME.has(name) && !NOT_DEFAULTED.has(name);
}
