// On an empty database, create the first organization and its owner so a new install is usable.
import { randomBytes } from "node:crypto";
import { createRealm, ensureSystemBots, SYSTEM_BOTS } from "@chat/core";
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

/**
 * Gives realms created before a system bot existed their missing bots, so clients can resolve every
 * sender from the start. One query when nothing is missing; several processes may run it at once.
 */
export async function ensureSystemBotsOfAllRealms(services: Services): Promise<void> {
  const { prisma } = services.db;
  const wanted = Object.values(SYSTEM_BOTS).length;
  const lacking = await prisma.$queryRaw<{ id: number }[]>`
    SELECT r.id FROM realm r
    WHERE (SELECT count(*) FROM user_profile u
           WHERE u.realm_id = r.id AND u.is_bot AND u.bot_owner_id IS NULL
             AND lower(split_part(u.delivery_email, '@', 1)) = ANY(${Object.values(SYSTEM_BOTS).map((bot) => bot.localPart)}::text[])) < ${wanted}`;
  for (const { id } of lacking) {
    await services.actions.run(id, async (tx, events) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(72011003, ${id})`;
      await ensureSystemBots(tx, events, services.ctx, await tx.realm.findUniqueOrThrow({ where: { id } }));
    });
  }
}
