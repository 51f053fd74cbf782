import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@chat/db";

/**
 * A secret every node shares, made by the first node that asks (a race keeps the first insert):
 * nothing to configure, and a node of any tier reads the same value.
 */
export async function serverSecret(prisma: PrismaClient, name: string): Promise<string> {
  await prisma.$executeRaw`
    INSERT INTO server_secret (name, value) VALUES (${name}, ${randomBytes(32).toString("base64url")}) ON CONFLICT (name) DO NOTHING`;
  const row = await prisma.serverSecret.findUniqueOrThrow({ where: { name } });
  return row.value;
}
