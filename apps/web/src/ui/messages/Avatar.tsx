// A user's picture, or their initial when there is none or it does not load (gravatar on a closed
// network): the CSP allows images from this origin and secure.gravatar.com only.
import { useState } from "preact/hooks";
import "./avatar.css";

/** Where the CSP lets images come from: anything else would only log a violation. */
function allowed(url: string): boolean {
  try {
    const parsed = new URL(url, location.href);
    return parsed.origin === location.origin || parsed.origin === "https://secure.gravatar.com";
  } catch {
    return false;
  }
}

/** Pictures that did not load: every other avatar of the same user shows the initial without trying again. */
const failedUrls = new Set<string>();

export function Avatar({ url, name, size = "normal" }: { url: string | null | undefined; name: string; size?: "normal" | "small" }) {
  const className = `avatar avatar-${size}`;
  // Re-renders this avatar when its picture fails (a changed url gets its own try).
  const [, setFailed] = useState<string | null>(null);
  if (url && !failedUrls.has(url) && allowed(url)) {
    const failed = () => {
      failedUrls.add(url);
      setFailed(url);
    };
    return <img class={className} src={url} alt="" loading="lazy" decoding="async" referrerpolicy="no-referrer" onError={failed} />;
  }
  const initial = [...name.trim()][0]?.toUpperCase() ?? "?";
  // A stable colour per name, from a small palette with enough contrast for white text.
  let hash = 0;
  for (const ch of name) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return (
    <span class={`${className} avatar-initial avatar-tone-${hash % 8}`} aria-hidden="true">
      {initial}
    </span>
  );
}
