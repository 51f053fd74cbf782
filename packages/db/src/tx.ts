import type { Prisma, PrismaClient } from "./generated/client.ts";

/** What an action receives: the transaction its caller opened (or the client, for reads). */
export type Tx = Prisma.TransactionClient;
export type Db = PrismaClient;
