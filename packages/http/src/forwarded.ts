// What a request says about how the client reached us. Express believes X-Forwarded-* only from the
// proxies TRUSTED_PROXIES names (app.ts); even then a value is used only if it is one we could
// have served, since it ends up in URLs handed to clients (realm_uri).
import type { Request } from "express";

/** "http" or "https": a trusted proxy's X-Forwarded-Proto if it is one of those, else the connection's. */
export function requestProtocol(req: Request): "http" | "https" {
  const forwarded = req.protocol.toLowerCase();
  if (forwarded === "http" || forwarded === "https") return forwarded;
  return "encrypted" in req.socket && req.socket.encrypted === true ? "https" : "http";
}
