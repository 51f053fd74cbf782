// A change's batch carries the X-Request-Id of the requests that made it, so the tiers handling it
// can log the id: published at once, republished by the outbox sweeper after a failed publish, and
// for sends that shared one statement (group commit), each send's id.
import type { ChangeBatch, ChangeStream } from "@chat/bus";
import { ActionRunner, authenticateApiKey, sendMessageAtomic, sweepOutbox, type Actor } from "@chat/core";
import { MODES, OWNER_EMAIL, startTestServer, type TestServer } from "../support/server.ts";

/** A change stream that records what is published, or refuses it while `failing`. */
function recordingStream(): ChangeStream & { published: ChangeBatch[]; failing: boolean } {
  const stream = {
    published: [] as ChangeBatch[],
    failing: false,
    async publish(batches: ChangeBatch[]) {
      if (stream.failing) throw new Error("publish refused by the test");
      // As a consumer reads it: through JSON.
      stream.published.push(...batches.map((batch) => JSON.parse(JSON.stringify(batch)) as ChangeBatch));
    },
  };
  return stream as unknown as ChangeStream & { published: ChangeBatch[]; failing: boolean };
}

describe.each(MODES)("change batches name their requests (%s)", (mode) => {
  let server: TestServer;
  let owner: Actor;

  beforeAll(async () => {
    server = await startTestServer(mode);
    const prisma = server.running.services.db.prisma;
    const row = await prisma.userProfile.findFirstOrThrow({ where: { email: OWNER_EMAIL } });
    owner = await authenticateApiKey(prisma, "", OWNER_EMAIL, row.api_key);
  });
  afterAll(() => server.stop());

  const runner = (stream: ChangeStream) => new ActionRunner(server.running.services.db.prisma, stream);
  const record = (runnerOf: ActionRunner, origin: Parameters<ActionRunner["run"]>[0]) =>
    runnerOf.run(origin, async (_tx, events) => events.send({ type: "test_change" }, [owner.id]));

  test("an action's batch carries its request id; one without a request carries none", async () => {
    const stream = recordingStream();
    const actions = runner(stream);
    await record(actions, { realmId: owner.realm_id, requestId: "req-action-1" });
    await record(actions, owner.realm_id);
    await actions.flush();
    expect(stream.published).toHaveLength(2);
    expect(stream.published[0].requestIds).toEqual(["req-action-1"]);
    expect(stream.published[1]).not.toHaveProperty("requestIds");
  });

  test("a batch the sweeper republishes after a failed publish still names its request", async () => {
    const prisma = server.running.services.db.prisma;
    const stream = recordingStream();
    stream.failing = true;
    await record(runner(stream), { realmId: owner.realm_id, requestId: "req-swept-1" });
    expect(stream.published).toEqual([]);
    stream.failing = false;
    // Other tests' rows may be waiting too (the server's own sweeper is slower than this).
    await sweepOutbox(prisma, stream, 0);
    const swept = stream.published.filter((batch) => batch.events.some((routed) => routed.event.type === "test_change"));
    expect(swept.map((batch) => batch.requestIds)).toEqual([["req-swept-1"]]);
  });

  test("sends sharing one statement: the batch names each send's request", async () => {
    const stream = recordingStream();
    const actions = runner(stream);
    const sends = Array.from({ length: 20 }, (_, i) =>
      sendMessageAtomic(actions, owner, { destination: { type: "private", to: [owner.id] }, content: `grouped ${i}`, client: "test" }, `req-send-${i}`),
    );
    const ids = (await Promise.all(sends)).map((sent) => sent.id);
    await actions.flush();
    const messagesIn = (batch: ChangeBatch) => batch.events.map((routed) => (routed.event.message as { id: number }).id);
    expect(stream.published.flatMap(messagesIn).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    // Some sends did share a statement (20 at once; two statements run at a time).
    expect(stream.published.some((batch) => messagesIn(batch).length > 1)).toBe(true);
    // Each batch names exactly the sends whose messages it holds, in their order.
    for (const batch of stream.published) {
      expect(batch.requestIds).toEqual(messagesIn(batch).map((id) => `req-send-${ids.indexOf(id)}`));
    }
  });
});
