import { Router } from "express";
import { emptyTopicFromDisplayName, InvalidArgumentError, MAX_USER_TOPIC_LENGTH, setUserTopicPolicy, VISIBILITY_POLICIES, type VisibilityPolicyValue } from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, route, serve, success } from "@chat/http";
import type { ApiServices } from "../services.ts";

/** Zulip's check_int_in: an integer, then one of the policies. */
function parsePolicy(raw: string, name: string): VisibilityPolicyValue {
  const value = Number(raw.trim());
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) throw new InvalidArgumentError(`${name} is not an integer`, name);
  if (!(VISIBILITY_POLICIES as readonly number[]).includes(value)) throw new InvalidArgumentError(`Invalid ${name}`, name);
  return value as VisibilityPolicyValue;
}

export const userTopicEndpoints = {
  update: endpoint({
    method: "post",
    path: "/user_topics",
    tag: "streams",
    auth: "basic",
    summary: "Set the user's visibility policy for a topic (feature levels 170, 219)",
    params: {
      stream_id: params.int(),
      topic: params.string().maxLength(MAX_USER_TOPIC_LENGTH),
      visibility_policy: params.custom(parsePolicy, { type: "integer", enum: [...VISIBILITY_POLICIES] }, "0 none (follow the stream), 1 muted, 2 unmuted, 3 followed."),
    },
    response: EMPTY_SUCCESS,
  }),
};

export function userTopicRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions } = services;
  const E = userTopicEndpoints;

  serve(
    router,
    E.update,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.update.params);
      // Messages' topics are stored trimmed, so a policy for another spelling would match none; ""
      // (or its display name) is the empty topic (feature level 334).
      const topic = emptyTopicFromDisplayName(p.topic.trim());
      await actions.run(originOf(req, actor), (tx, events) => setUserTopicPolicy(tx, events, actor, p.stream_id, topic, p.visibility_policy));
      success(res);
    }),
  );
  return router;
}
