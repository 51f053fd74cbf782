import type { CustomProfileFieldModel, PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { AdministratorRequiredError, badRequest } from "../errors.ts";
import type { Actor } from "../models.ts";
import { renderMarkdown } from "../lib/markdown.ts";
import { isAdmin } from "../lib/roles.ts";
import { withLegacyShape } from "../lib/legacy-shape.ts";
import { activeUserIds } from "../queries/users.ts";

/** Custom profile field types (Zulip's CustomProfileField.*). */
export const PROFILE_FIELD_SHORT_TEXT = 1;
export const PROFILE_FIELD_LONG_TEXT = 2;
export const PROFILE_FIELD_CHOICE = 3;
export const PROFILE_FIELD_DATE = 4;
export const PROFILE_FIELD_URL = 5;
export const PROFILE_FIELD_USER = 6;
export const PROFILE_FIELD_EXTERNAL_ACCOUNT = 7;
/** Feature level 166 (Zulip 7.0): text, as short text, that clients show by the name. */
export const PROFILE_FIELD_PRONOUNS = 8;
export const PROFILE_FIELD_TYPES = [1, 2, 3, 4, 5, 6, 7, 8];
/** Zulip's CustomProfileField.MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS. */
export const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2;

/** The types as /register's `custom_profile_field_types` names them, keyed by Zulip's keyword. */
export const PROFILE_FIELD_TYPE_CHOICES: Record<string, { id: number; name: string }> = {
  SHORT_TEXT: { id: PROFILE_FIELD_SHORT_TEXT, name: "Short text" },
  LONG_TEXT: { id: PROFILE_FIELD_LONG_TEXT, name: "Long text" },
  CHOICE: { id: PROFILE_FIELD_CHOICE, name: "List of options" },
  DATE: { id: PROFILE_FIELD_DATE, name: "Date picker" },
  URL: { id: PROFILE_FIELD_URL, name: "Link" },
  USER: { id: PROFILE_FIELD_USER, name: "Person picker" },
  EXTERNAL_ACCOUNT: { id: PROFILE_FIELD_EXTERNAL_ACCOUNT, name: "External account" },
  PRONOUNS: { id: PROFILE_FIELD_PRONOUNS, name: "Pronouns" },
};

export const PROFILE_FIELD_NAME_MAX_LENGTH = 40;
export const PROFILE_FIELD_HINT_MAX_LENGTH = 80;
export const PROFILE_SHORT_TEXT_MAX_LENGTH = 50;
export const PROFILE_LONG_TEXT_MAX_LENGTH = 500;
/**
 * The external accounts a field can name by subtype alone (Zulip's DEFAULT_EXTERNAL_ACCOUNTS), as
 * /register's realm_default_external_accounts shows them: what admins pick, the label and hint
 * users see, and the link made of a username.
 */
export const DEFAULT_EXTERNAL_ACCOUNTS: Record<string, { text: string; name: string; hint: string; url_pattern: string }> = {
  twitter: { text: "Twitter", name: "Twitter username", hint: "", url_pattern: "https://twitter.com/%(username)s" },
  github: { text: "GitHub", name: "GitHub username", hint: "", url_pattern: "https://github.com/%(username)s" },
};
const EXTERNAL_ACCOUNT_SUBTYPES = [...Object.keys(DEFAULT_EXTERNAL_ACCOUNTS), "custom"];

export interface CustomProfileFieldObject {
  id: number;
  name: string;
  type: number;
  hint: string;
  field_data: string;
  order: number;
  /** Feature level 244. */
  required: boolean;
  /** Feature level 296: users may edit their own value. */
  editable_by_user: boolean;
  /** Feature level 146: present, and true, only for the fields shown in the profile summary. */
  display_in_profile_summary?: true;
}

type Reader = Pick<PrismaClient, "customProfileField">;

function formatField(field: CustomProfileFieldModel): CustomProfileFieldObject {
  const formatted: CustomProfileFieldObject = { id: field.id, name: field.name, type: field.type, hint: field.hint, field_data: field.field_data, order: field.order, required: field.required, editable_by_user: field.editable_by_user };
  if (field.display_in_profile_summary) formatted.display_in_profile_summary = true;
  return formatted;
}

/** The realm's custom profile fields in display order. */
export async function getCustomProfileFields(db: Reader, realmId: number): Promise<CustomProfileFieldObject[]> {
  const fields = await db.customProfileField.findMany({ where: { realm_id: realmId }, orderBy: [{ order: "asc" }, { id: "asc" }] });
  return fields.map(formatField);
}

async function notifyFields(tx: Tx, events: EventRecorder, realmId: number, op: "add" | "update" | "delete"): Promise<void> {
  // Without `op` since feature level 45; 3.x clients keep it.
  events.send(withLegacyShape({ type: "custom_profile_fields", fields: await getCustomProfileFields(tx, realmId) }, { op }), await activeUserIds(tx, realmId));
}

export type FieldData = Record<string, unknown>;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks field_data for a field type (Zulip's validate_custom_field_data); returns what to store. */
function checkFieldData(type: number, fieldData: FieldData | undefined): string {
  if (type === PROFILE_FIELD_CHOICE) {
    const data = fieldData ?? {};
    if (Object.keys(data).length < 1) throw badRequest("Field must have at least one choice.");
    const texts = new Set<string>();
    for (const [key, value] of Object.entries(data)) {
      if (key.trim() === "") throw badRequest("'value' cannot be blank.");
      if (!isPlainObject(value)) throw badRequest(`field_data["${key}"] is not a dict`);
      for (const name of ["text", "order"]) {
        if (!(name in value)) throw badRequest(`field_data["${key}"] key is missing: ${name}`);
        if (typeof value[name] !== "string") throw badRequest(`field_data["${key}"]["${name}"] is not a string`);
      }
      const extra = Object.keys(value).filter((k) => k !== "text" && k !== "order");
      if (extra.length > 0) throw badRequest(`Unexpected arguments: ${extra.join(", ")}`);
      const text = (value.text as string).trim();
      if (text === "") throw badRequest("'text' cannot be blank.");
      if (texts.has(text)) throw badRequest(`'${text}' is duplicated`);
      texts.add(text);
    }
    return JSON.stringify(data);
  }
  if (type === PROFILE_FIELD_EXTERNAL_ACCOUNT) {
    const data = fieldData ?? {};
    const subtype = data.subtype;
    if (typeof subtype !== "string") throw badRequest('field_data key is missing: subtype');
    if (!EXTERNAL_ACCOUNT_SUBTYPES.includes(subtype)) throw badRequest("Invalid external account type");
    if (subtype === "custom") {
      const pattern = data.url_pattern;
      if (typeof pattern !== "string" || pattern === "") throw badRequest("Custom external account must define url pattern");
      if ((pattern.match(/%\(username\)s/g) ?? []).length !== 1 || !/^https?:\/\/\S+$/.test(pattern.replace("%(username)s", "x"))) {
        throw badRequest("Malformed URL pattern.");
      }
      return JSON.stringify({ subtype, url_pattern: pattern });
    }
    return JSON.stringify({ subtype });
  }
  return "";
}

function checkNameAndHint(name: string, hint: string): void {
  if (name.trim() === "") throw badRequest("Label cannot be blank.");
  if (name.length > PROFILE_FIELD_NAME_MAX_LENGTH) throw badRequest(`name is too long (limit: ${PROFILE_FIELD_NAME_MAX_LENGTH} characters)`);
  if (hint.length > PROFILE_FIELD_HINT_MAX_LENGTH) throw badRequest(`hint is too long (limit: ${PROFILE_FIELD_HINT_MAX_LENGTH} characters)`);
}

async function checkLabelAvailable(tx: Tx, realmId: number, name: string, exceptId?: number): Promise<void> {
  const existing = await tx.customProfileField.findFirst({ where: { realm_id: realmId, name, ...(exceptId ? { NOT: { id: exceptId } } : {}) } });
  if (existing) throw badRequest("A field with that label already exists.");
}

async function accessField(tx: Tx, actor: Actor, fieldId: number): Promise<CustomProfileFieldModel> {
  const field = await tx.customProfileField.findFirst({ where: { id: fieldId, realm_id: actor.realm_id } });
  if (!field) throw badRequest(`Field id ${fieldId} not found.`);
  return field;
}

/**
 * Zulip's display_in_profile_summary checks: at most MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS fields
 * (the realm's row locked, so two requests cannot both take the last place), and not long text or
 * users, which a summary cannot show.
 */
async function checkDisplayInProfileSummary(tx: Tx, realmId: number, exceptId?: number): Promise<void> {
  await tx.$queryRaw`SELECT id FROM realm WHERE id = ${realmId} FOR UPDATE`;
  const shown = await tx.customProfileField.count({ where: { realm_id: realmId, display_in_profile_summary: true, ...(exceptId ? { NOT: { id: exceptId } } : {}) } });
  if (shown >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS) throw badRequest(`Only ${MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);
}

function checkSummaryType(type: number, displayInProfileSummary: boolean): void {
  if (displayInProfileSummary && (type === PROFILE_FIELD_LONG_TEXT || type === PROFILE_FIELD_USER)) throw badRequest("Field type not supported for display in profile summary.");
}

/** POST /realm/profile_fields (Zulip's try_add_realm_custom_profile_field). */
export async function createProfileField(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  options: { name: string; hint: string; fieldType: number; fieldData?: FieldData; displayInProfileSummary?: boolean; required?: boolean; editableByUser?: boolean },
): Promise<number> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const displayInProfileSummary = options.displayInProfileSummary ?? false;
  if (displayInProfileSummary) await checkDisplayInProfileSummary(tx, actor.realm_id);
  const name = options.name.trim();
  checkNameAndHint(name, options.hint);
  if (!PROFILE_FIELD_TYPES.includes(options.fieldType)) throw badRequest("Invalid field type.");
  const fieldData = checkFieldData(options.fieldType, options.fieldData);
  checkSummaryType(options.fieldType, displayInProfileSummary);
  await checkLabelAvailable(tx, actor.realm_id, name);
  const created = await tx.customProfileField.create({
    data: {
      realm_id: actor.realm_id,
      name,
      hint: options.hint,
      type: options.fieldType,
      field_data: fieldData,
      display_in_profile_summary: displayInProfileSummary,
      required: options.required ?? false,
      editable_by_user: options.editableByUser ?? true,
    },
  });
  await tx.customProfileField.update({ where: { id: created.id }, data: { order: created.id } });
  await notifyFields(tx, events, actor.realm_id, "add");
  return created.id;
}

/** PATCH /realm/profile_fields/{id}: name, hint, field_data, required, display_in_profile_summary (Zulip's try_update_realm_custom_profile_field). */
export async function updateProfileField(
  tx: Tx,
  events: EventRecorder,
  actor: Actor,
  fieldId: number,
  changes: { name?: string; hint?: string; fieldData?: FieldData; required?: boolean; displayInProfileSummary?: boolean; editableByUser?: boolean },
): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const field = await accessField(tx, actor, fieldId);
  if (changes.displayInProfileSummary === true) await checkDisplayInProfileSummary(tx, actor.realm_id, field.id);
  const displayInProfileSummary = changes.displayInProfileSummary ?? field.display_in_profile_summary;
  checkSummaryType(field.type, displayInProfileSummary);
  const name = changes.name === undefined ? field.name : changes.name.trim();
  const hint = changes.hint ?? field.hint;
  checkNameAndHint(name, hint);
  if (name !== field.name) await checkLabelAvailable(tx, actor.realm_id, name, field.id);
  const fieldData =
    changes.fieldData !== undefined && (field.type === PROFILE_FIELD_CHOICE || field.type === PROFILE_FIELD_EXTERNAL_ACCOUNT)
      ? checkFieldData(field.type, changes.fieldData)
      : field.field_data;
  const required = changes.required ?? field.required;
  const editableByUser = changes.editableByUser ?? field.editable_by_user;
  await tx.customProfileField.update({ where: { id: field.id }, data: { name, hint, field_data: fieldData, required, display_in_profile_summary: displayInProfileSummary, editable_by_user: editableByUser } });
  await notifyFields(tx, events, actor.realm_id, "update");
}

/** DELETE /realm/profile_fields/{id}: the field and every user's value of it. */
export async function deleteProfileField(tx: Tx, events: EventRecorder, actor: Actor, fieldId: number): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const field = await accessField(tx, actor, fieldId);
  await tx.customProfileField.delete({ where: { id: field.id } });
  await notifyFields(tx, events, actor.realm_id, "delete");
}

/** PATCH /realm/profile_fields: `order` lists every field id of the realm in the new order. */
export async function reorderProfileFields(tx: Tx, events: EventRecorder, actor: Actor, order: number[]): Promise<void> {
  if (!isAdmin(actor)) throw new AdministratorRequiredError();
  const fields = await tx.customProfileField.findMany({ where: { realm_id: actor.realm_id }, select: { id: true } });
  const ids = new Set(fields.map((f) => f.id));
  if (order.length !== ids.size || new Set(order).size !== order.length || !order.every((id) => ids.has(id))) {
    throw badRequest("Invalid order mapping.");
  }
  for (const [index, id] of order.entries()) await tx.customProfileField.update({ where: { id }, data: { order: index } });
  await notifyFields(tx, events, actor.realm_id, "update");
}

/** A value to store for a user's field, checked by the field's type; rendered_value for long text. */
export async function checkProfileFieldValue(
  tx: Tx,
  field: CustomProfileFieldModel,
  value: string | number[],
): Promise<{ value: string; renderedValue: string | null }> {
  const name = field.name;
  if (field.type === PROFILE_FIELD_USER) {
    if (!Array.isArray(value)) throw badRequest(`${name} is not a list`);
    const unique = [...new Set(value)];
    const found = await tx.userProfile.findMany({ where: { id: { in: unique }, realm_id: field.realm_id, is_active: true }, select: { id: true } });
    const ok = new Set(found.map((u) => u.id));
    for (const id of value) if (!ok.has(id)) throw badRequest(`Invalid user ID: ${id}`);
    return { value: JSON.stringify(unique), renderedValue: null };
  }
  if (typeof value !== "string") throw badRequest(`${name} is not a string`);
  switch (field.type) {
    case PROFILE_FIELD_SHORT_TEXT:
    case PROFILE_FIELD_EXTERNAL_ACCOUNT:
    case PROFILE_FIELD_PRONOUNS:
      if (value.length > PROFILE_SHORT_TEXT_MAX_LENGTH) throw badRequest(`${name} is too long (limit: ${PROFILE_SHORT_TEXT_MAX_LENGTH} characters)`);
      return { value, renderedValue: null };
    case PROFILE_FIELD_LONG_TEXT:
      if (value.length > PROFILE_LONG_TEXT_MAX_LENGTH) throw badRequest(`${name} is too long (limit: ${PROFILE_LONG_TEXT_MAX_LENGTH} characters)`);
      return { value, renderedValue: renderMarkdown(value).html };
    case PROFILE_FIELD_CHOICE: {
      const choices = field.field_data ? (JSON.parse(field.field_data) as Record<string, unknown>) : {};
      if (!Object.hasOwn(choices, value)) throw badRequest(`'${value}' is not a valid choice for '${name}'.`);
      return { value, renderedValue: null };
    }
    case PROFILE_FIELD_DATE: {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
      const date = match ? new Date(Date.UTC(+match[1], +match[2] - 1, +match[3])) : null;
      if (!date || date.toISOString().slice(0, 10) !== value) throw badRequest(`${name} is not a date`);
      return { value, renderedValue: null };
    }
    case PROFILE_FIELD_URL: {
      let ok = false;
      try {
        const url = new URL(value);
        ok = (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && !/\s/.test(value);
      } catch {
        ok = false;
      }
      if (!ok) throw badRequest(`${name} is not a URL`);
      return { value, renderedValue: null };
    }
    default:
      return { value, renderedValue: null };
  }
}
