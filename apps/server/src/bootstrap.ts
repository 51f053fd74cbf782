// On an empty database, create the first organization and its owner so a new install is usable.
import { randomBytes } from "node:crypto";
import { createRealm } from "@chat/core";
import type { Services } from "./services.ts";

export interface BootstrapResult {
  created: boolean;
  email?: string;
  /** Set only when the password was generated here; printed once, never stored in clear. */
  generatedPassword?: string;
}

export async function bootstrapIfEmpty(services: Services): Promise<BootstrapResult> {
  const { prisma } = services.db;
  if ((await prisma.realm.count()) > 0) return { created: false };
  const { bootstrap } = services.config;
  const generatedPassword = bootstrap.ownerPassword === null ? randomBytes(12).toString("base64url") : undefined;
  const created = await services.actions.run(0, async (tx, events) => {
    // Several processes may start at once on an empty database: one creates, the others see it.
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(72011002)`;
    if ((await tx.realm.count()) > 0) return false;
    await createRealm(tx, events, services.ctx, {
      subdomain: "",
      name: bootstrap.realmName,
      owner: { email: bootstrap.ownerEmail, fullName: bootstrap.ownerName, password: bootstrap.ownerPassword ?? generatedPassword! },
    });
    return true;
  });
  return created ? { created, email: bootstrap.ownerEmail, generatedPassword } : { created: false };
}
