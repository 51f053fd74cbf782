// Zulip's `ignored_parameters_unsupported` (feature level 167): a success names, sorted, the query
// and form parameters the request sent that its endpoint does not take, so a client learns they
// were ignored (a newer client's parameter on this server, a typo) instead of being refused.
// The key is present only when the list is not empty.
import type { IncomingMessage } from "node:http";
import type { Endpoint } from "./endpoints.ts";
import type { ParamSource, ParamSpec } from "./params.ts";

/**
 * Parameters of every request, never listed: `api_key`, a credential (file downloads take it), and
 * `client`, which Zulip reads on every request to name the sending client (this server names it
 * from the User-Agent).
 */
const REQUEST_WIDE_PARAMETERS = new Set(["api_key", "client"]);

const ENDPOINT = Symbol("endpoint");
const READ_SPECS = Symbol("read parameter specs");

type Tagged = { [ENDPOINT]?: Endpoint; [READ_SPECS]?: ParamSpec[] };

const declaredNames = new WeakMap<Endpoint, Set<string>>();

/** The parameters a contract declares: parsed ones, ones its handler reads itself, its file field. */
function declaredBy(contract: Endpoint): Set<string> {
  let names = declaredNames.get(contract);
  if (names === undefined) {
    names = new Set([...Object.keys(contract.params), ...Object.keys(contract.otherParams ?? {}), ...(contract.file ? [contract.file.name] : [])]);
    declaredNames.set(contract, names);
  }
  return names;
}

/** Marks the request as served by `contract` (serve does, before the route's handlers). */
export function tagEndpoint(req: object, contract: Endpoint): void {
  (req as Tagged)[ENDPOINT] = contract;
}

/**
 * Notes that a handler parsed `spec` from `source` (parseParams does): a parameter read from
 * another spec than the contract's is still not ignored.
 */
export function noteParamsRead(source: object, spec: ParamSpec): void {
  const tagged = source as Tagged;
  (tagged[READ_SPECS] ??= []).push(spec);
}

function parameterNames(part: unknown): string[] {
  return part !== null && typeof part === "object" ? Object.keys(part) : [];
}

/** The parameters of `source` that `contract` does not take, sorted (as Zulip sorts them). */
export function ignoredParameters(contract: Endpoint | undefined, source: ParamSource): string[] {
  const declared = contract ? declaredBy(contract) : new Set<string>();
  const read = (source as Tagged)[READ_SPECS] ?? [];
  const ignored = new Set<string>();
  for (const name of [...parameterNames(source.query), ...parameterNames(source.body)]) {
    if (declared.has(name) || REQUEST_WIDE_PARAMETERS.has(name) || read.some((spec) => Object.hasOwn(spec, name))) continue;
    ignored.add(name);
  }
  return [...ignored].sort();
}

/** `{ ignored_parameters_unsupported }` for a success body, or nothing when every parameter was taken. */
export function ignoredParametersField(contract: Endpoint | undefined, source: ParamSource): { ignored_parameters_unsupported?: string[] } {
  const ignored = ignoredParameters(contract, source);
  return ignored.length > 0 ? { ignored_parameters_unsupported: ignored } : {};
}

/** The field for a request `serve` tagged with its contract (a request no contract serves lists nothing). */
export function ignoredParametersOf(req: IncomingMessage): { ignored_parameters_unsupported?: string[] } {
  const contract = (req as Tagged)[ENDPOINT];
  if (contract === undefined) return {};
  return ignoredParametersField(contract, req as IncomingMessage & ParamSource);
}

/** The key every success body may have (openapi.ts adds it to each success schema). */
export const IGNORED_PARAMETERS_SCHEMA = {
  type: "array",
  items: { type: "string" },
  description: "The request's query and form parameters this endpoint does not take, which were ignored (sorted). Present only when there are some.",
};
