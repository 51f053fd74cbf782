// The interface languages a user may choose (Zulip's get_available_language_codes), by code, with
// the name `update_display_settings` events carry as `language_name`.
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  ar: "العربية",
  bg: "Български",
  bn: "বাংলা",
  ca: "Català",
  cs: "Čeština",
  cy: "Cymraeg",
  da: "Dansk",
  de: "Deutsch",
  el: "Ελληνικά",
  en: "English",
  "en-gb": "British English",
  eo: "Esperanto",
  es: "Español",
  fa: "فارسی",
  fi: "Suomi",
  fr: "Français",
  gl: "Galego",
  gu: "ગુજરાતી",
  hi: "हिन्दी",
  hu: "Magyar",
  id: "Bahasa Indonesia",
  it: "Italiano",
  ja: "日本語",
  ko: "한국어",
  lt: "Lietuvių",
  ml: "മലയാളം",
  mn: "Монгол",
  nl: "Nederlands",
  no: "Norsk",
  pl: "Polski",
  pt: "Português",
  "pt-br": "Português Brasileiro",
  "pt-pt": "Português Europeu",
  ro: "Română",
  ru: "Русский",
  sk: "Slovenčina",
  sr: "Српски",
  sv: "Svenska",
  ta: "தமிழ்",
  te: "తెలుగు",
  tl: "Tagalog",
  tr: "Türkçe",
  uk: "Українська",
  uz: "O‘zbek",
  vi: "Tiếng Việt",
  "zh-hans": "简体中文",
  "zh-hant": "繁體中文",
};

export function isLanguageCode(code: string): boolean {
  return Object.hasOwn(LANGUAGE_NAMES, code);
}

export function languageName(code: string): string {
  return LANGUAGE_NAMES[code] ?? code;
}
