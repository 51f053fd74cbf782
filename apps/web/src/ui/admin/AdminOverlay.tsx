// Organization administration (#organization/<section>), loaded on demand by the core's router.
// Everyone may open it (as in Zulip, the lists are useful to all); only administrators get the
// controls that change anything, and the server checks every change again.
import type { ComponentType } from "preact";
import { isAdmin } from "../../state/store";
import { type NavItem, Overlay } from "../settings/common";
import { OrgPermissionsSection, OrgProfileSection, OrgSettingsSection } from "./OrgSettings";
import { AdminBotsSection, UsersSection } from "./Users";
import { DefaultStreamsSection, StreamsSection } from "./Streams";
import { EmojiSection, LinkifiersSection, ProfileFieldsSection, UserGroupsSection } from "./Extras";

type Entry = NavItem & { view: ComponentType; adminOnly?: boolean };

const SECTIONS: Entry[] = [
  { key: "organization-profile", label: "Organization profile", group: "Organization", view: OrgProfileSection },
  { key: "organization-settings", label: "Organization settings", group: "Organization", view: OrgSettingsSection },
  { key: "organization-permissions", label: "Permissions", group: "Organization", view: OrgPermissionsSection },
  { key: "users", label: "Users", group: "People", view: UsersSection },
  { key: "bot-list-admin", label: "Bots", group: "People", view: AdminBotsSection, adminOnly: true },
  { key: "user-groups-admin", label: "User groups", group: "People", view: UserGroupsSection },
  { key: "streams", label: "Streams", group: "Streams", view: StreamsSection },
  { key: "default-streams-list", label: "Default streams", group: "Streams", view: DefaultStreamsSection },
  { key: "emoji-settings", label: "Custom emoji", group: "Content", view: EmojiSection },
  { key: "linkifier-settings", label: "Linkifiers", group: "Content", view: LinkifiersSection },
  { key: "profile-field-settings", label: "Profile fields", group: "Content", view: ProfileFieldsSection },
];

/** Zulip's other names for the same sections. */
const ALIASES: Record<string, string> = {
  profile: "organization-profile",
  settings: "organization-settings",
  permissions: "organization-permissions",
  "user-list-admin": "users",
  "deactivated-users-admin": "users",
  bots: "bot-list-admin",
  "user-groups": "user-groups-admin",
  channels: "streams",
  "default-channels-list": "default-streams-list",
  emoji: "emoji-settings",
  linkifiers: "linkifier-settings",
  "profile-fields": "profile-field-settings",
};

export default function AdminOverlay(props: { section: string; onClose(): void }) {
  const admin = isAdmin.value;
  const items = SECTIONS.filter((s) => admin || !s.adminOnly);
  const key = ALIASES[props.section] ?? props.section;
  const active = items.find((s) => s.key === key) ?? items[0];
  const View = active.view;
  return (
    <Overlay title="Organization" route="organization" items={items} current={active.key} onClose={props.onClose}>
      <View key={active.key} />
    </Overlay>
  );
}
