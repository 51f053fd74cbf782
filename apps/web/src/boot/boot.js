// The first load's head start: the page's two slow requests, POST /json/register and the first
// message list (GET /json/messages), sent as soon as the page is parsed, while the client's bundle
// is still being fetched, compiled and run (a few hundred ms on a slow machine). api/client.ts
// takes an answer from here when the client makes the identical request (method, URL and body)
// and sends its own otherwise, so a difference costs only the head start. A plain (parser-blocking)
// script in <head>: it runs the moment it arrives, while the preload scanner fetches the bundle and
// styles beside it; `async` and `defer` ran it only after the bundle's compile (Chromium, measured
// 200-500 ms later on a loaded machine), and the page has nothing to show before the bundle runs
// anyway. The requests mirror
// state/events.ts (registerOnce) and state/messages.ts (MessageList.loadInitial): change them
// together. Plain script, not bundled (it must not wait for the bundle it runs ahead of): the
// bootScript plugin in vite.config.ts emits it under a hashed name and puts it first in <head>.
(() => {
  const csrf = /(?:^|;\s*)csrftoken=([^;]+)/.exec(document.cookie);
  if (!csrf || typeof fetch !== "function") return;
  const early = new Map();
  window.__prefetched = early;
  const send = (method, url, body) => {
    const headers = { Accept: "application/json" };
    if (body !== undefined) {
      headers["X-CSRFToken"] = decodeURIComponent(csrf[1]);
      headers["Content-Type"] = "application/x-www-form-urlencoded";
    }
    const answer = fetch(url, { method, headers, body, credentials: "same-origin" });
    answer.catch(() => {}); // a failure is the taker's to report
    early.set(`${method} ${url} ${body ?? ""}`, answer);
  };
  const capabilities = {
    notification_settings_null: true,
    bulk_message_deletion: true,
    user_avatar_url_field_optional: true,
    stream_typing_notifications: true,
    user_settings_object: true,
    empty_topic_name: false,
  };
  send(
    "POST",
    "/json/register",
    new URLSearchParams({ apply_markdown: "true", client_gravatar: "false", slim_presence: "true", include_subscribers: "false", client_capabilities: JSON.stringify(capabilities) }).toString(),
  );
  // Only the combined feed: any address but #narrow/... shows it first (route.ts); a narrow's
  // operands need the /register data to read.
  if (location.hash.replace(/^#/, "").split("/")[0] !== "narrow") {
    const query = new URLSearchParams({ anchor: "first_unread", num_before: "50", num_after: "50", include_anchor: "true", narrow: "[]", apply_markdown: "true", client_gravatar: "false" });
    send("GET", `/json/messages?${query}`, undefined);
  }
})();
