// What a bot is (Zulip's UserProfile.bot_type and Service.interface) and how its services show in
// realm_bots (Zulip's get_service_dicts_for_bot).

export const BOT_TYPE_GENERIC = 1;
export const BOT_TYPE_INCOMING_WEBHOOK = 2;
export const BOT_TYPE_OUTGOING_WEBHOOK = 3;
export const BOT_TYPE_EMBEDDED = 4;

/** Realm.bot_creation_policy: everyone, everyone but generic bots, administrators only. */
export const BOT_CREATION_EVERYONE = 1;
export const BOT_CREATION_LIMIT_GENERIC_BOTS = 2;
export const BOT_CREATION_ADMINS_ONLY = 3;

/** Service.interface: Zulip's generic payload, or Slack's outgoing webhook format. */
export const INTERFACE_GENERIC = 1;
export const INTERFACE_SLACK = 2;
export const SERVICE_INTERFACES: readonly number[] = [INTERFACE_GENERIC, INTERFACE_SLACK];

/** Bot types whose service row holds what the bot calls (outgoing) or runs (embedded). */
export const SERVICE_BOT_TYPES: readonly number[] = [BOT_TYPE_OUTGOING_WEBHOOK, BOT_TYPE_EMBEDDED];

/** Whether a bot is a service bot: messages that mention it (or are sent to it) call its service. */
export function isServiceBotType(botType: number | null | undefined): boolean {
  return botType === BOT_TYPE_OUTGOING_WEBHOOK || botType === BOT_TYPE_EMBEDDED;
}
/** Bot types that keep configuration (bot_config_data). */
export const CONFIG_BOT_TYPES: readonly number[] = [BOT_TYPE_INCOMING_WEBHOOK, BOT_TYPE_EMBEDDED];

export interface ServiceRow {
  name: string;
  base_url: string;
  token: string;
  interface: number;
}

/**
 * A bot's `services` as realm_bots shows them: an outgoing webhook's URL, interface and token; an
 * embedded bot's name and configuration; nothing for other bots.
 */
export function serviceDicts(botType: number | null, services: ServiceRow[], config: Record<string, string>): Array<Record<string, unknown>> {
  if (botType === BOT_TYPE_OUTGOING_WEBHOOK) return services.map((s) => ({ base_url: s.base_url, interface: s.interface, token: s.token }));
  if (botType === BOT_TYPE_EMBEDDED && services.length > 0) return [{ config_data: config, service_name: services[0].name }];
  return [];
}

/** What realm_bots shows of a bot besides its own row. */
export interface BotExtras {
  services: Array<Record<string, unknown>>;
  defaultSendingStream: string | null;
  defaultEventsRegisterStream: string | null;
}
