// RFC 6570 URL templates (levels 1 to 4, with string values), as Zulip 9.0 takes them for
// linkifiers (feature level 176) and code playgrounds (196): checked as the `uri_template`
// package's validate() does, their variable names listed, and expanded.

interface VarSpec {
  name: string;
  /** A prefix modifier (`{var:3}`), or 0. */
  prefix: number;
}

type Part = string | { operator: string; vars: VarSpec[] };

/** Each operator's first character, separator, whether it names its variables, and what an empty value gets. */
const OPERATORS: Record<string, { first: string; sep: string; named: boolean; ifEmpty: string; reserved: boolean }> = {
  "": { first: "", sep: ",", named: false, ifEmpty: "", reserved: false },
  "+": { first: "", sep: ",", named: false, ifEmpty: "", reserved: true },
  "#": { first: "#", sep: ",", named: false, ifEmpty: "", reserved: true },
  ".": { first: ".", sep: ".", named: false, ifEmpty: "", reserved: false },
  "/": { first: "/", sep: "/", named: false, ifEmpty: "", reserved: false },
  ";": { first: ";", sep: ";", named: true, ifEmpty: "", reserved: false },
  "?": { first: "?", sep: "&", named: true, ifEmpty: "=", reserved: false },
  "&": { first: "&", sep: "&", named: true, ifEmpty: "=", reserved: false },
};

/** RFC 6570's literals: any character but controls, space and "'%<>\^`{|}, or a percent-encoded octet. */
const LITERALS = /^(?:[^\x00-\x20\x7f"'%<>\\^`{|}]|%[0-9A-Fa-f]{2})*$/;
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;

/** The template's literal parts and expressions, or null if it is not a valid RFC 6570 template. */
function parse(template: string): Part[] | null {
  const parts: Part[] = [];
  let rest = template;
  while (rest !== "") {
    const open = rest.indexOf("{");
    const literal = open === -1 ? rest : rest.slice(0, open);
    if (!LITERALS.test(literal)) return null;
    if (literal !== "") parts.push(literal);
    if (open === -1) break;
    const close = rest.indexOf("}", open);
    if (close === -1) return null;
    let body = rest.slice(open + 1, close);
    rest = rest.slice(close + 1);
    let operator = "";
    if (body !== "" && body[0] in OPERATORS && body[0] !== "") {
      operator = body[0];
      body = body.slice(1);
    }
    const vars: VarSpec[] = [];
    for (const spec of body.split(",")) {
      const match = /^([^:*]*)(?::([1-9][0-9]{0,3})|(\*))?$/.exec(spec);
      if (!match || !VARNAME.test(match[1])) return null;
      vars.push({ name: match[1], prefix: match[2] ? Number(match[2]) : 0 });
    }
    parts.push({ operator, vars });
  }
  return parts;
}

/** Whether the template is a valid RFC 6570 URL template. */
export function isValidUrlTemplate(template: string): boolean {
  return parse(template) !== null;
}

/** The names of the template's variables, each once, in order; [] for an invalid template. */
export function urlTemplateVariables(template: string): string[] {
  const names: string[] = [];
  for (const part of parse(template) ?? []) {
    if (typeof part === "string") continue;
    for (const v of part.vars) if (!names.includes(v.name)) names.push(v.name);
  }
  return names;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(value: string, allowReserved: boolean): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (UNRESERVED.test(char) || (allowReserved && RESERVED.test(char))) out += char;
    else if (allowReserved && char === "%" && /^[0-9A-Fa-f]{2}$/.test(value.slice(i + 1, i + 3))) out += char;
    else {
      const code = value.codePointAt(i)!;
      const whole = String.fromCodePoint(code);
      if (whole.length === 2) i++;
      out += encodeURIComponent(whole).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    }
  }
  return out;
}

/** The template with these values (undefined: left out, as RFC 6570's undefined variables). */
export function expandUrlTemplate(template: string, values: Record<string, string | undefined>): string {
  const parts = parse(template);
  if (parts === null) return "";
  let out = "";
  for (const part of parts) {
    if (typeof part === "string") {
      out += part;
      continue;
    }
    const op = OPERATORS[part.operator];
    const expanded: string[] = [];
    for (const spec of part.vars) {
      const raw = values[spec.name];
      if (raw === undefined) continue;
      const value = encode(spec.prefix > 0 ? [...raw].slice(0, spec.prefix).join("") : raw, op.reserved);
      if (!op.named) expanded.push(value);
      else expanded.push(value === "" ? `${spec.name}${op.ifEmpty}` : `${spec.name}=${value}`);
    }
    if (expanded.length > 0) out += op.first + expanded.join(op.sep);
  }
  return out;
}
