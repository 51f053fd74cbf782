// Every response a test sees is checked against the API document (GET /api/v1/openapi.json, built
// from the endpoints' contracts): its endpoint must be in the document, its status one the
// endpoint declares, and its JSON body valid against that status's schema. A response that
// drifts from its contract fails the test that saw it.
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import { matchOperation, type OpenApiDocument } from "@chat/http";
import { apiDocument } from "../../apps/server/src/openapi.ts";

const DOCUMENT_ID = "https://chat.invalid/openapi.json";

let ajv: Ajv2020 | null = null;
const validators = new Map<string, ValidateFunction>();

/** The document, and ajv holding it (compiled lazily, once per test process). */
function documentAjv(): { document: OpenApiDocument; ajv: Ajv2020 } {
  const document = apiDocument();
  if (!ajv) {
    // strict off: the document's own keywords (openapi, paths, x-rest-of-path) are not JSON Schema.
    ajv = new Ajv2020({ strict: false, allErrors: true });
    ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }
  return { document, ajv };
}

/** A JSON pointer's token (RFC 6901). */
function pointerToken(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The validator of the schema at `pointer` in the document. */
export function documentValidator(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    const { ajv } = documentAjv();
    validate = ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
    if (!validate) throw new Error(`the API document has no schema at ${pointer}`);
    validators.set(pointer, validate);
  }
  return validate;
}

/** A named shape's validator (`Message`, `Event`, ...). */
export function shapeValidator(name: string): ValidateFunction {
  return documentValidator(`/components/schemas/${pointerToken(name)}`);
}

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 8)
    .map((error) => `${error.instancePath || "(body)"} ${error.message}${error.params && Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : ""}`)
    .join("; ");
}

function excerpt(body: unknown): string {
  const text = JSON.stringify(body);
  return text.length > 600 ? `${text.slice(0, 600)}...` : text;
}

export class ContractViolation extends Error {}

/**
 * Checks one response against the document; throws a ContractViolation naming the request, the
 * status and ajv's errors. `path` is the request's path from the root (`/api/v1/messages?...`).
 */
export function checkResponse(method: string, path: string, status: number, body: unknown, contentType: string | undefined): void {
  const { document } = documentAjv();
  const pathname = path.split("?")[0];
  const verb = method.toLowerCase() === "head" ? "get" : method.toLowerCase();
  const where = `${method.toUpperCase()} ${pathname} → ${status}`;
  const matched = matchOperation(document, verb, pathname);
  if (!matched) {
    // A path nothing serves is Express's "Endpoint not found"; anything else is an undescribed endpoint.
    if (status === 404) return checkErrorBody(where, body);
    throw new ContractViolation(`${where}: no endpoint of the API document serves this path`);
  }
  const responses = matched.operation.responses;
  const declared = responses[String(status)];
  if (!declared) throw new ContractViolation(`${where}: status ${status} is not among ${matched.path}'s responses (${Object.keys(responses).join(", ")})`);
  // A HEAD answer has no body to check.
  if (method.toLowerCase() === "head") return;
  const ref = (declared as { $ref?: string }).$ref;
  const content = ref ? undefined : declared.content;
  // A page's answer (a success, or a refusal in its own words) where the document says it may be HTML.
  if (content?.["text/html"] && contentType?.startsWith("text/html")) return;
  if (ref || content?.["application/json"]) {
    if (!contentType?.includes("json")) throw new ContractViolation(`${where}: the document says JSON, the response is ${contentType ?? "without a type"}`);
    const pointer = ref
      ? `${ref.slice(1)}/content/application~1json/schema`
      : `/paths/${pointerToken(matched.path)}/${verb}/responses/${status}/content/application~1json/schema`;
    const validate = documentValidator(pointer);
    if (!validate(body)) throw new ContractViolation(`${where} (${matched.path}): the body does not match the API document: ${describeErrors(validate.errors)}; body: ${excerpt(body)}`);
  }
}

function checkErrorBody(where: string, body: unknown): void {
  const validate = shapeValidator("Error");
  if (!validate(body)) throw new ContractViolation(`${where}: the error body does not match the API document: ${describeErrors(validate.errors)}; body: ${excerpt(body)}`);
}
