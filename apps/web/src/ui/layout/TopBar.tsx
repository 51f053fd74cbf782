// The top bar: the organization's name, the connection state, and the gear menu (settings,
// organization settings for administrators, channels, logout).
import { useEffect, useRef, useState } from "preact/hooks";
import { csrfToken } from "../../api/client";
import { connection, stopEvents } from "../../state/events";
import { isAdmin, me, realm, realmName } from "../../state/store";
import { Avatar } from "../messages/Avatar";
import { notificationPermission, requestNotificationPermission } from "./notifications";

async function logout(): Promise<void> {
  stopEvents();
  try {
    await fetch("/accounts/logout/", { method: "POST", headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" });
  } finally {
    location.assign("/login");
  }
}

function GearMenu() {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLUListElement>(null);
  useEffect(() => {
    if (!open) return;
    menu.current?.querySelector<HTMLElement>("a, button")?.focus();
    const close = (event: Event) => {
      if (event instanceof KeyboardEvent) {
        if (event.key !== "Escape") return;
        event.preventDefault();
        button.current?.focus();
      } else if (menu.current?.contains(event.target as Node) || button.current?.contains(event.target as Node)) return;
      setOpen(false);
    };
    document.addEventListener("pointerdown", close, true);
    document.addEventListener("keydown", close, true);
    return () => {
      document.removeEventListener("pointerdown", close, true);
      document.removeEventListener("keydown", close, true);
    };
  }, [open]);
  const done = () => setOpen(false);
  return (
    <div class="gear">
      <button ref={button} type="button" class="gear-button" aria-haspopup="true" aria-expanded={open} aria-label="Main menu" onClick={() => setOpen(!open)}>
        <span aria-hidden="true">⚙</span>
      </button>
      {open && (
        <ul class="gear-menu" ref={menu} aria-label="Main menu">
          <li>
            <a href="#settings/profile" onClick={done}>
              Personal settings
            </a>
          </li>
          {isAdmin.value && (
            <li>
              <a href="#organization/organization-profile" onClick={done}>
                Organization settings
              </a>
            </li>
          )}
          {isAdmin.value && (
            <li>
              <a href="#organization/users" onClick={done}>
                Users and invitations
              </a>
            </li>
          )}
          <li>
            <a href="#channels/all" onClick={done}>
              Browse channels
            </a>
          </li>
          {notificationPermission.value === "default" && (
            <li>
              <button type="button" onClick={() => void requestNotificationPermission().then(done)}>
                Enable desktop notifications
              </button>
            </li>
          )}
          <li class="gear-separator" role="separator" />
          <li>
            <button type="button" onClick={() => void logout()}>
              Log out
            </button>
          </li>
        </ul>
      )}
    </div>
  );
}

export function TopBar() {
  const user = me.value;
  const icon = typeof realm.value.realm_icon_url === "string" ? realm.value.realm_icon_url : null;
  return (
    <header class="topbar">
      <a class="topbar-realm" href="#feed">
        <Avatar url={icon} name={realmName.value} size="small" />
        <span class="topbar-realm-name">{realmName.value}</span>
      </a>
      <div class="topbar-status" role="status">
        {connection.value === "reconnecting" && <span class="topbar-reconnecting">Reconnecting…</span>}
      </div>
      {user && (
        <span class="topbar-me">
          <Avatar url={user.avatar_url} name={user.full_name} size="small" />
          <span class="topbar-me-name">{user.full_name}</span>
        </span>
      )}
      <GearMenu />
    </header>
  );
}
