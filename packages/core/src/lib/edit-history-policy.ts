// Who sees messages' edit history (Zulip's MessageEditHistoryVisibilityPolicyEnum, feature level
// 358): everything, moves only, or nothing. Stored as Zulip's integers; the API names them. Zulip
// 3.x's allow_edit_history is kept in step: false exactly when the policy is "none".

export const EDIT_HISTORY_POLICY = { all: 1, moves: 2, none: 3 } as const;
export type EditHistoryPolicyName = keyof typeof EDIT_HISTORY_POLICY;
export const EDIT_HISTORY_POLICY_NAMES = Object.keys(EDIT_HISTORY_POLICY) as EditHistoryPolicyName[];

/** The API's name of a stored policy (an unknown value reads as "all", the default). */
export function editHistoryPolicyName(value: number): EditHistoryPolicyName {
  return EDIT_HISTORY_POLICY_NAMES.find((name) => EDIT_HISTORY_POLICY[name] === value) ?? "all";
}

/**
 * The policy a PATCH /realm asks for, if any: the policy by name, else 3.x's boolean (true keeps
 * a policy that shows something, and turns "none" into "all").
 */
export function editHistoryPolicyAfter(current: number, changes: { message_edit_history_visibility_policy?: EditHistoryPolicyName; allow_edit_history?: boolean }): number | undefined {
  if (changes.message_edit_history_visibility_policy !== undefined) return EDIT_HISTORY_POLICY[changes.message_edit_history_visibility_policy];
  if (changes.allow_edit_history === undefined) return undefined;
  if (!changes.allow_edit_history) return EDIT_HISTORY_POLICY.none;
  return current === EDIT_HISTORY_POLICY.none ? EDIT_HISTORY_POLICY.all : current;
}
