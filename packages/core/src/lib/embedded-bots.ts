// The embedded bots this server runs (Zulip's EMBEDDED_BOTS): what POST /bots accepts as an
// embedded bot's `service_name`, and /register's `realm_embedded_bots`, each with the
// configuration keys its creator fills in (Zulip's load_bot_config_template). Their handlers,
// which answer the messages such a bot receives, live elsewhere.

export interface EmbeddedBot {
  name: string;
  /** The configuration keys the bot needs, with example values; {} for none. */
  config: Record<string, string>;
}

export const EMBEDDED_BOTS: readonly EmbeddedBot[] = [
  { name: "helloworld", config: {} },
  { name: "encrypt", config: {} },
  { name: "followup", config: {} },
];

export function isEmbeddedBotName(name: string): boolean {
  return EMBEDDED_BOTS.some((bot) => bot.name === name);
}
