import type { IncomingMessage } from "node:http";

/** The sending client's name, as Zulip derives it: the User-Agent's product token ("ZulipPython/0.7" → "ZulipPython"). */
export function clientName(req: Pick<IncomingMessage, "headers">): string {
  const agent = req.headers["user-agent"];
  if (!agent) return "API";
  const product = agent.trim().split(/[\s/]/, 1)[0];
  return product ? product.slice(0, 30) : "API";
}
