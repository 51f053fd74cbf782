/**
 * Whether `name` is an IANA time zone name (pytz's all_timezones, as Zulip checks): canonical names
 * and their aliases ("US/Mountain", "UTC"), spelt with the database's case.
 */
export function isValidTimezone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name)) return false;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  // ICU matches case-insensitively; the database (and Zulip) does not: "utc" is not "UTC".
  return name === resolved || name.toLowerCase() !== resolved.toLowerCase();
}
