import { randomInt } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Zulip's API keys: 32 random alphanumeric characters. */
export function generateApiKey(length = 32): string {
  let key = "";
  for (let i = 0; i < length; i++) key += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return key;
}

/** Argon2id, memory-hard; parameters are the library's defaults (OWASP-recommended). */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function verifyPassword(passwordHash: string | null, password: string): Promise<boolean> {
  if (!passwordHash) return false;
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}
