// Onboarding steps (Zulip's zerver/lib/onboarding_steps.py; feature levels 230, 233 and 259, which
// replaced hotspots): one-time notices the web app shows a user until they are marked read. The
// steps are Zulip 9.0's; /register lists those the user has not marked, and marking one answers
// with an `onboarding_steps` event listing those still to come.
import type { PrismaClient, Tx } from "@chat/db";
import type { EventRecorder } from "../events.ts";
import { JsonableError } from "../errors.ts";
import type { Actor } from "../models.ts";
import { checkHumanUser } from "../lib/human-users.ts";

/** Zulip 9.0's ONE_TIME_NOTICES, in its order. */
export const ONE_TIME_NOTICES = [
  "visibility_policy_banner",
  "intro_inbox_view_modal",
  "intro_recent_view_modal",
  "first_stream_created_banner",
  "jump_to_conversation_banner",
  "non_interleaved_view_messages_fading",
  "interleaved_view_messages_fading",
] as const;

export interface OnboardingStepDict {
  type: "one_time_notice";
  name: string;
}

/** The steps the user has still to see (Zulip's get_next_onboarding_steps). */
export async function nextOnboardingSteps(db: Pick<PrismaClient, "$queryRaw">, userId: number): Promise<OnboardingStepDict[]> {
  const seen = await db.$queryRaw<Array<{ onboarding_step: string }>>`SELECT onboarding_step FROM onboarding_step WHERE user_id = ${userId}`;
  const done = new Set(seen.map((row) => row.onboarding_step));
  return ONE_TIME_NOTICES.filter((name) => !done.has(name)).map((name) => ({ type: "one_time_notice", name }));
}

/** POST /users/me/onboarding_steps (Zulip's mark_onboarding_step_as_read): human users only. */
export async function markOnboardingStepAsRead(tx: Tx, events: EventRecorder, actor: Actor, step: string): Promise<void> {
  checkHumanUser(actor);
  if (!(ONE_TIME_NOTICES as readonly string[]).includes(step)) throw new JsonableError(`Unknown onboarding_step: ${step}`);
  await tx.$executeRaw`INSERT INTO onboarding_step (user_id, onboarding_step) VALUES (${actor.id}, ${step}) ON CONFLICT (user_id, onboarding_step) DO NOTHING`;
  events.send({ type: "onboarding_steps", onboarding_steps: await nextOnboardingSteps(tx, actor.id) }, [actor.id]);
}
