// Personal settings (#settings/<section>), loaded on demand by the core's router.
import type { ComponentType } from "preact";
import { AccountSection, ProfileSection } from "./Profile";
import { AlertWordsSection, MutedTopicsSection, NotificationsSection, PreferencesSection, StatusSection } from "./Preferences";
import { BotsSection } from "./Bots";
import { type NavItem, Overlay } from "./common";

const SECTIONS: (NavItem & { view: ComponentType })[] = [
  { key: "profile", label: "Profile", view: ProfileSection },
  { key: "account-and-privacy", label: "Account & privacy", view: AccountSection },
  { key: "preferences", label: "Preferences", view: PreferencesSection },
  { key: "notifications", label: "Notifications", view: NotificationsSection },
  { key: "status", label: "Status", view: StatusSection },
  { key: "alert-words", label: "Alert words", view: AlertWordsSection },
  { key: "muted-topics", label: "Muted topics", view: MutedTopicsSection },
  { key: "your-bots", label: "Bots", view: BotsSection },
];

/** Zulip's older section names, so their links still land somewhere. */
const ALIASES: Record<string, string> = { "your-account": "account-and-privacy", account: "account-and-privacy", "display-settings": "preferences", "bots": "your-bots" };

export default function SettingsOverlay(props: { section: string; onClose(): void }) {
  const key = ALIASES[props.section] ?? props.section;
  const active = SECTIONS.find((s) => s.key === key) ?? SECTIONS[0];
  const View = active.view;
  return (
    <Overlay title="Settings" route="settings" items={SECTIONS} current={active.key} onClose={props.onClose}>
      {/* keyed, so a section's form state starts fresh when it is opened again */}
      <View key={active.key} />
    </Overlay>
  );
}
