// A user's picture, or their initial when the picture is elsewhere (gravatar): the CSP allows
// images from this origin only.
import "./avatar.css";

function sameOrigin(url: string): boolean {
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

export function Avatar({ url, name, size = "normal" }: { url: string | null | undefined; name: string; size?: "normal" | "small" }) {
  const className = `avatar avatar-${size}`;
  if (url && sameOrigin(url)) return <img class={className} src={url} alt="" loading="lazy" decoding="async" />;
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
