import type { ApiClient } from "./client.ts";
import type { TestServer } from "./server.ts";

export type RoleName = "owner" | "admin" | "member" | "guest";
const ROLE_VALUES: Record<RoleName, number> = { owner: 100, admin: 200, member: 400, guest: 600 };

export interface TestUser {
  id: number;
  email: string;
  client: ApiClient;
}

/** Creates a user through the API (as the bootstrap owner), with a role, and logs them in. */
export async function createTestUser(server: TestServer, name: string, role: RoleName = "member"): Promise<TestUser> {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}@example.com`;
  const created = await server.owner.post("/users", { email, password: "test-password", full_name: name, short_name: name.split(" ")[0] });
  if (created.body.result !== "success") throw new Error(`creating ${email}: ${JSON.stringify(created.body)}`);
  const id = created.body.user_id as number;
  if (role !== "member") {
    const changed = await server.owner.patch(`/users/${id}`, { role: ROLE_VALUES[role] });
    if (changed.body.result !== "success") throw new Error(`setting role of ${email}: ${JSON.stringify(changed.body)}`);
  }
  const login = await server.anonymous.post("/fetch_api_key", { username: email, password: "test-password" });
  return { id, email, client: server.client(email, login.body.api_key) };
}
