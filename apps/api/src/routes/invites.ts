// Invitations, as Zulip 9.0's /invites endpoints: email invitations (whose emails the worker sends,
// queued after the commit), reusable links, the list of pending ones, revoking and resending.
import { Router, type Request } from "express";
import {
  createMultiuseInvite,
  INVITATION_LINK_VALIDITY_MINUTES,
  inviteUsers,
  InvitationError,
  listInvites,
  MAX_INVITE_EXPIRES_IN_MINUTES,
  MAX_INVITE_GROUPS,
  queueEmail,
  resendUserInvite,
  revokeMultiuseInvite,
  revokeUserInvite,
} from "@chat/core";
import { actorOf, EMPTY_SUCCESS, endpoint, originOf, params, parseParams, requestProtocol, route, schema, serve, success, successBody } from "@chat/http";
import type { ApiServices } from "../services.ts";
import { pathId } from "./path-ids.ts";

const STREAM_IDS = { type: "array", items: { type: "integer" } };
const GROUP_IDS = params
  .json<number[] | null>({ anyOf: [{ type: "array", items: { type: "integer" }, maxItems: MAX_INVITE_GROUPS }, { type: "null" }] })
  .default(null)
  .describe("User groups the new user joins (feature level 322): groups the inviter may add members to.");
const EXPIRES = params
  .json<number | null>({ anyOf: [{ type: "integer", minimum: 1, maximum: MAX_INVITE_EXPIRES_IN_MINUTES }, { type: "null" }] })
  .default(INVITATION_LINK_VALIDITY_MINUTES)
  .describe(`Minutes the invitation works, or null for ever; default ${INVITATION_LINK_VALIDITY_MINUTES} (10 days).`);
const INVITE_AS = params.int().default(400).describe("The role the new user gets: 100 owner (owners only), 200 administrator or 300 moderator (administrators only), 400 member, 600 guest.");
const DEFAULT_SUBSCRIPTIONS = params.bool().default(false).describe("Also subscribe the new user to the organization's default channels (feature level 261).");
const INVITE_ID = { invite_id: { schema: { type: "integer" }, description: "The invitation's id (GET /invites)." } };

const INVITE = schema.object(
  {
    id: schema.integer(),
    invited_by_user_id: schema.integer(),
    invited: schema.integer(),
    expiry_date: { anyOf: [{ type: "integer" }, { type: "null" }] },
    invited_as: schema.integer(),
    is_multiuse: schema.boolean(),
  },
  { email: schema.string(), notify_referrer_on_join: schema.boolean(), link_url: schema.string() },
);

const common = { tag: "invites", auth: "basic" } as const;

export const inviteEndpoints = {
  send: endpoint({
    ...common,
    method: "post",
    path: "/invites",
    summary: "Send email invitations to join the organization",
    description:
      "Who may: the organization's invite_to_realm_policy (`can_invite_others_to_realm` in /register). Every address must be valid and taken by the organization, or nothing is sent; addresses that already have an account are skipped and the others invited, answered as an INVITATION_FAILED error with `sent_invitations` true. At most the organization's daily limit of invitations (3,000 unless set) a day.",
    params: {
      invitee_emails: params.string().maxLength(100_000).describe("Addresses separated by commas or newlines; `Name <address>` is taken."),
      invite_expires_in_minutes: EXPIRES,
      invite_as: INVITE_AS,
      stream_ids: params.json<number[]>(STREAM_IDS).default([]).describe("Channels the new user is subscribed to."),
      include_realm_default_subscriptions: DEFAULT_SUBSCRIPTIONS,
      notify_referrer_on_join: params.bool().default(true).describe("Send the inviter a direct message when the invitation is accepted (feature level 267)."),
      group_ids: GROUP_IDS,
    },
    response: EMPTY_SUCCESS,
    errors: ["INVITATION_FAILED", "UNAUTHORIZED_PRINCIPAL"],
  }),
  list: endpoint({
    ...common,
    method: "get",
    path: "/invites",
    summary: "Pending invitations: all of them for administrators, one's own for others (feature level 209)",
    params: {},
    response: successBody({ invites: schema.array(INVITE) }),
  }),
  revoke: endpoint({
    ...common,
    method: "delete",
    path: "/invites/{invite_id}",
    pathParams: INVITE_ID,
    summary: "Revoke an email invitation (its sender, or an administrator)",
    params: {},
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  resend: endpoint({
    ...common,
    method: "post",
    path: "/invites/{invite_id}/resend",
    pathParams: INVITE_ID,
    summary: "Send an email invitation again (with a new link; the old one stops working)",
    params: {},
    response: EMPTY_SUCCESS,
    errors: ["INVITATION_FAILED", "UNAUTHORIZED_PRINCIPAL"],
  }),
  createLink: endpoint({
    ...common,
    method: "post",
    path: "/invites/multiuse",
    summary: "Create a reusable invitation link (the organization's create_multiuse_invite_group: administrators by default)",
    params: {
      invite_expires_in_minutes: EXPIRES,
      invite_as: INVITE_AS,
      stream_ids: params.json<number[]>(STREAM_IDS).default([]).describe("Channels each new user is subscribed to."),
      include_realm_default_subscriptions: DEFAULT_SUBSCRIPTIONS,
      group_ids: GROUP_IDS,
    },
    response: successBody({ invite_link: schema.string() }),
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
  revokeLink: endpoint({
    ...common,
    method: "delete",
    path: "/invites/multiuse/{invite_id}",
    pathParams: INVITE_ID,
    summary: "Revoke a reusable invitation link",
    params: {},
    response: EMPTY_SUCCESS,
    errors: ["UNAUTHORIZED_PRINCIPAL"],
  }),
};

export function inviteRoutes(services: ApiServices): Router {
  const router = Router();
  const { actions, ctx, prisma } = services;
  const E = inviteEndpoints;
  const linkOptions = (req: Request) => ({ externalHost: ctx.externalHost, protocol: requestProtocol(req) });

  serve(
    router,
    E.send,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.send.params);
      const { emails, skipped } = await actions.run(originOf(req, actor), (tx, events) =>
        inviteUsers(tx, events, linkOptions(req), actor, {
          inviteeEmails: p.invitee_emails,
          inviteExpiresInMinutes: p.invite_expires_in_minutes,
          inviteAs: p.invite_as,
          streamIds: p.stream_ids,
          includeRealmDefaultSubscriptions: p.include_realm_default_subscriptions,
          notifyReferrerOnJoin: p.notify_referrer_on_join,
          groupIds: p.group_ids ?? [],
        }),
      );
      for (const email of emails) await queueEmail(services.jobs, email);
      if (skipped.length > 0) {
        throw new InvitationError("Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!", skipped, { sentInvitations: true });
      }
      success(res);
    }),
  );

  serve(
    router,
    E.list,
    route(async (req, res) => {
      success(res, { invites: await listInvites(prisma, linkOptions(req), actorOf(res)) });
    }),
  );

  serve(
    router,
    E.revoke,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "invite_id");
      await actions.run(originOf(req, actor), (tx, events) => revokeUserInvite(tx, events, actor, id));
      success(res);
    }),
  );

  serve(
    router,
    E.resend,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "invite_id");
      const email = await actions.run(originOf(req, actor), (tx, events) => resendUserInvite(tx, events, linkOptions(req), actor, id));
      await queueEmail(services.jobs, email);
      success(res);
    }),
  );

  serve(
    router,
    E.createLink,
    route(async (req, res) => {
      const actor = actorOf(res);
      const p = parseParams(req, E.createLink.params);
      const link = await actions.run(originOf(req, actor), (tx, events) =>
        createMultiuseInvite(tx, events, linkOptions(req), actor, {
          inviteExpiresInMinutes: p.invite_expires_in_minutes,
          inviteAs: p.invite_as,
          streamIds: p.stream_ids,
          includeRealmDefaultSubscriptions: p.include_realm_default_subscriptions,
          groupIds: p.group_ids ?? [],
        }),
      );
      success(res, { invite_link: link });
    }),
  );

  serve(
    router,
    E.revokeLink,
    route(async (req, res) => {
      const actor = actorOf(res);
      const id = pathId(req, "invite_id");
      await actions.run(originOf(req, actor), (tx, events) => revokeMultiuseInvite(tx, events, actor, id));
      success(res);
    }),
  );
  return router;
}
