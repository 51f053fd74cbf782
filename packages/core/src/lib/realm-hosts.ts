/**
 * The realm subdomain a request's Host names, Zulip-style: `<subdomain>.<externalHost>`. A host
 * that is the external host itself, an IP address, or anything else names the root realm ("").
 */
export function subdomainForHost(host: string | undefined, externalHost: string): string {
  if (!host) return "";
  const hostname = stripPort(host.trim().toLowerCase());
  const root = stripPort(externalHost.toLowerCase());
  if (hostname === root || !hostname.endsWith(`.${root}`)) return "";
  return hostname.slice(0, -(root.length + 1));
}

function stripPort(host: string): string {
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1);
  const colon = host.lastIndexOf(":");
  return colon === -1 || host.indexOf(":") !== colon ? host : host.slice(0, colon);
}

/** The host a realm is served at (with the external host's port), as its absolute URLs name it. */
export function realmHost(subdomain: string, externalHost: string): string {
  return (subdomain === "" ? externalHost : `${subdomain}.${externalHost}`).toLowerCase();
}

export function realmUri(subdomain: string, externalHost: string, protocol: string): string {
  return `${protocol}://${subdomain === "" ? externalHost : `${subdomain}.${externalHost}`}`;
}
