import type { ApiClient } from "./client.ts";
import type { TestServer } from "./server.ts";

export type RoleName = "owner" | "admin" | "moderator" | "member" | "guest";
const ROLE_VALUES: Record<RoleName, number> = { owner: 100, admin: 200, moderator: 300, member: 400, guest: 600 };

export interface TestUser {
  id: number;
  email: string;
  client: ApiClient;
}

/** Creates a member with this email through the API (as the bootstrap owner) and logs them in. */
export async function createMember(server: TestServer, email: string, fullName: string): Promise<TestUser> {
  const created = await server.owner.post("/users", { email, password: "member-pass", full_name: fullName, short_name: fullName.split(" ")[0] });
  if (created.body.result !== "success") throw new Error(`creating ${email}: ${JSON.stringify(created.body)}`);
  const login = await server.anonymous.post("/fetch_api_key", { username: email, password: "member-pass" });
  return { id: created.body.user_id as number, email, client: server.client(email, login.body.api_key) };
}

/** Creates a user with a role, the email derived from the name. */
export async function createTestUser(server: TestServer, name: string, role: RoleName = "member"): Promise<TestUser> {
  const user = await createMember(server, `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}@example.com`, name);
  if (role !== "member") {
    const changed = await server.owner.patch(`/users/${user.id}`, { role: ROLE_VALUES[role] });
    if (changed.body.result !== "success") throw new Error(`setting role of ${user.email}: ${JSON.stringify(changed.body)}`);
  }
  return user;
}
