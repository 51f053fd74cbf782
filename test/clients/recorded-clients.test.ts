// Real Zulip clients, replayed: zulip-terminal 0.7.0 and HEAD, the python `zulip` library's examples
// and the `zulip_bots` framework were run against this server through a logging proxy, and what
// they sent is in ./recordings (see its README). Each step is one test, so a run lists exactly which
// requests a client would trip over; steps run in order and later ones use what earlier ones captured.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { replayStep, type Recording, type Scope } from "../support/replay.ts";
import { MODES, OWNER_EMAIL, OWNER_PASSWORD, startTestServer, type TestServer } from "../support/server.ts";

const RECORDINGS = ["zulip-terminal", "zulip-terminal-head", "python-zulip-api", "zulip-bots"];

// The people the recordings were made with; their names matter (bots answer "@**Helper Bot**").
const USERS = [
  { handle: "alice", email: "alice@example.com", fullName: "Alice Anders" },
  { handle: "bob", email: "bob@example.com", fullName: "Bob Baker" },
  { handle: "helperbot", email: "helperbot@example.com", fullName: "Helper Bot" },
];

function loadRecording(name: string): Recording {
  return JSON.parse(readFileSync(join(__dirname, "recordings", `${name}.json`), "utf8")) as Recording;
}

/** The placeholders every recording may use before any step has captured anything. */
async function createWorld(server: TestServer): Promise<Scope> {
  const owner = server.owner.credentials!;
  const me = await server.owner.get("/users/me");
  const scope: Scope = new Map<string, unknown>([
    ["owner.email", OWNER_EMAIL],
    ["owner.key", owner.apiKey],
    ["owner.password", OWNER_PASSWORD],
    ["owner.id", me.body.user_id],
  ]);
  for (const user of USERS) {
    const password = `${user.handle}-password-1`;
    const created = await server.owner.post("/users", { email: user.email, password, full_name: user.fullName, short_name: user.handle });
    if (created.body.result !== "success") throw new Error(`creating ${user.email}: ${JSON.stringify(created.body)}`);
    const login = await server.anonymous.post("/fetch_api_key", { username: user.email, password });
    scope.set(`${user.handle}.email`, user.email).set(`${user.handle}.key`, login.body.api_key);
    scope.set(`${user.handle}.password`, password).set(`${user.handle}.id`, created.body.user_id);
  }
  const general = await server.owner.get("/get_stream_id", { stream: "general" });
  scope.set("stream.general.id", general.body.stream_id);
  return scope;
}

describe.each(MODES)("recorded clients (%s)", (mode) => {
  describe.each(RECORDINGS)("%s", (name) => {
    const recording = loadRecording(name);
    let server: TestServer;
    let scope: Scope;
    beforeAll(async () => {
      server = await startTestServer(mode);
      scope = await createWorld(server);
    });
    afterAll(() => server.stop());

    recording.steps.forEach((step, index) => {
      const label = `${String(index + 1).padStart(2, "0")} ${step.scenario ? "(scenario) " : ""}${step.method} ${step.path}: ${step.description}`;
      test(label, async () => {
        expect(await replayStep(server.baseUrl, recording, step, scope)).toEqual([]);
      });
    });
  });
});
