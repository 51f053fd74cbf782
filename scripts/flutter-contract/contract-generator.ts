// The contract of zulip-flutter's JSON parsers, made from their source: the json_serializable output
// in lib/api/model/*.g.dart and lib/api/route/*.g.dart (each `_$XFromJson` and each enum map), the
// event and message dispatch switches in events.dart and model.dart, and for what is written by
// hand the table in hand-kept.ts. Any construct it does not know stops it, naming the class and
// the expression: a new parser shape upstream is then a change to review here. The command is
// generate.ts.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { Condition, Contract, ContractClass, EnumSpec, Field, Read, TypeSpec } from "./contract.ts";
import { CLASSES, CONDITIONS, FUNCTIONS, HELPERS, RULES, type DartPlace } from "./hand-kept.ts";

const PARSER_DIRS = ["lib/api/model", "lib/api/route"];

export interface FlutterTree {
  commit: string;
  committedAt: string;
  list(dir: string): string[];
  read(file: string): string;
}

/** A bare git directory (the commit at HEAD) or a checkout (its files as they are). */
export function openTree(location: string): FlutterTree {
  const bare = fs.existsSync(path.join(location, "HEAD")) && fs.existsSync(path.join(location, "objects"));
  const git = (...args: string[]) =>
    execFileSync("git", [...(bare ? ["--git-dir", location] : ["-C", location]), ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
  const commit = git("rev-parse", "HEAD").trim();
  const committedAt = git("log", "-1", "--format=%cI", commit).trim();
  if (bare) {
    return {
      commit,
      committedAt,
      list: (dir) => git("ls-tree", "--name-only", `${commit}:${dir}`).split("\n").filter(Boolean).map((name) => `${dir}/${name}`),
      read: (file) => git("show", `${commit}:${file}`),
    };
  }
  const dirty = git("status", "--porcelain", "--", "lib/api").trim() !== "";
  return {
    commit: dirty ? `${commit}+uncommitted-changes` : commit,
    committedAt,
    list: (dir) => fs.readdirSync(path.join(location, dir)).map((name) => `${dir}/${name}`),
    read: (file) => fs.readFileSync(path.join(location, file), "utf8"),
  };
}

// ---------------------------------------------------------------------------------------------
// Scanning Dart text

/** Index just past the string literal starting at i. */
function skipString(s: string, i: number): number {
  const quote = s[i];
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === "\\") j++;
    else if (s[j] === quote) return j + 1;
  }
  throw new Error(`unterminated string at ${s.slice(i, i + 40)}`);
}

const OPENERS = "([{<";
const CLOSERS = ")]}>";

/** Index of the bracket closing the one at `open` (generic angle brackets count; `=>` does not). */
function matchClose(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === "'" || c === '"') {
      i = skipString(s, i) - 1;
    } else if (c === "=" && s[i + 1] === ">") {
      i++;
    } else if (OPENERS.includes(c)) {
      depth++;
    } else if (CLOSERS.includes(c)) {
      depth--;
      if (depth === 0) return i;
    }
  }
  throw new Error(`unbalanced brackets in ${s.slice(open, open + 80)}`);
}

/** Splits at `sep` where it is outside brackets and strings. */
function splitTop(s: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "'" || c === '"') {
      i = skipString(s, i) - 1;
    } else if (c === "=" && s[i + 1] === ">") {
      i++;
    } else if (OPENERS.includes(c)) {
      depth++;
    } else if (CLOSERS.includes(c)) {
      depth--;
    } else if (depth === 0 && s.startsWith(sep, i)) {
      parts.push(s.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** Dart's `??`, kept apart from a nullable type's `?` before it (`as bool? ?? true`). */
const IF_NULL = "\u2047";

/**
 * Whitespace removed except between two word characters (`as String`, `const X`); no trailing
 * commas; `??` written as IF_NULL.
 */
export function normalize(dart: string): string {
  return dart
    .replace(/\s+/g, " ")
    .replaceAll(" ?? ", IF_NULL)
    .replace(/ (?=[^\w$])|(?<=[^\w$]) /g, "")
    .replace(/,(?=[)\]}])/g, "")
    .trim();
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

// ---------------------------------------------------------------------------------------------
// Parsing one generated value expression

export interface EnumMap {
  source: string;
  members: Record<string, string | number | null>;
}

export interface Parsed {
  key: string | null;
  read?: Read;
  type: TypeSpec;
  required: boolean;
  default?: unknown;
  via: string[];
}

interface Source {
  key: string | null;
  read?: Read;
  via: string[];
  fill?: Record<string, unknown>;
}

export class Unrecognised extends Error {}

export class ExpressionParser {
  constructor(
    private readonly enums: Map<string, EnumMap>,
    private readonly where: (place: DartPlace) => string,
  ) {}

  private source(s: string): Source | null {
    if (s === "e") return { key: null, via: [] };
    const key = /^json\['([^']*)'\]$/.exec(s);
    if (key) return { key: key[1], via: [] };
    const call = /^([A-Z]\w*\.\w+)\(json,'([^']*)'\)$/.exec(s);
    if (!call) return null;
    const helper = HELPERS[call[1]];
    if (!helper) throw new Unrecognised(`readValue helper ${call[1]} is not in hand-kept.ts`);
    if (!("read" in helper)) throw new Unrecognised(`helper ${call[1]} parses its value; it cannot be read through`);
    const via = [`${call[1]} (${this.where(helper.place)})`];
    const read = helper.read === "key" ? undefined : typeof helper.read === "function" ? helper.read(call[2]) : helper.read;
    return { key: call[2], read, via, fill: helper.fillElements };
  }

  /** `SRC as T` / `SRC as T?`. */
  private cast(s: string): { src: Source; type: TypeSpec; required: boolean } | null {
    const m = /^(.*?)as ((?:List|Map|String|bool|int|num|double|Object)(?:<[\w,?<>]*>)?)(\?)?$/.exec(s);
    if (!m) return null;
    const src = this.source(m[1].trim());
    if (!src) return null;
    const name = m[2].replace(/<.*/, "");
    const type: TypeSpec =
      name === "List" ? { kind: "list", of: { kind: "dynamic" } }
      : name === "Map" ? { kind: "Map" }
      : name === "Object" ? { kind: "dynamic" }
      : name === "double" ? { kind: "num" }
      : { kind: name as "String" | "bool" | "int" | "num" };
    return { src, type, required: m[3] !== "?" };
  }

  private fromSource(src: Source, type: TypeSpec, required: boolean, via: string[] = []): Parsed {
    return { key: src.key, read: src.read, type, required, via: [...src.via, ...via] };
  }

  /** A source inside a call's argument: the argument itself, or a cast of it. */
  private argument(arg: string): { src: Source; required: boolean; cast?: TypeSpec } {
    const cast = this.cast(arg);
    if (cast) return { src: cast.src, required: cast.required, cast: cast.type };
    const src = this.source(arg);
    if (src) return { src, required: true };
    throw new Unrecognised(`argument ${arg}`);
  }

  literal(s: string): unknown {
    if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
    if (s === "true" || s === "false") return s === "true";
    if (s === "[]") return [];
    if (s === "null") return null;
    const str = /^'([^']*)'$/.exec(s);
    if (str) return str[1];
    const member = /^(\w+)\.(\w+)$/.exec(s);
    if (member) {
      const map = this.enums.get(member[1]);
      if (map && member[2] in map.members) return map.members[member[2]];
    }
    throw new Unrecognised(`default value ${s}`);
  }

  parse(x: string): Parsed {
    // A helper that parses the value itself decides the whole field, whatever wraps it.
    for (const call of x.matchAll(/([A-Z]\w*\.\w+)\(json,'([^']*)'\)/g)) {
      const helper = HELPERS[call[1]];
      if (!helper) throw new Unrecognised(`readValue helper ${call[1]} is not in hand-kept.ts`);
      if ("field" in helper) {
        const field = helper.field(call[2]);
        return { key: call[2], ...field, via: [`${call[1]} (${this.where(helper.place)})`] };
      }
    }

    const defaulted = splitTop(x, IF_NULL);
    if (defaulted.length === 2) {
      const inner = this.parse(defaulted[0]);
      return { ...inner, required: false, default: this.literal(defaulted[1]) };
    }

    const ternary = /^(json\['[^']*'\]|[A-Z]\w*\.\w+\(json,'[^']*'\))==null\?null:(.*)$/.exec(x);
    if (ternary) return { ...this.parse(ternary[2]), required: false };

    if (x.startsWith("(")) {
      const close = matchClose(x, 0);
      const head = x.slice(1, close);
      const tail = x.slice(close + 1);
      const number = /^\??\.to(Int|Double)\(\)$/.exec(tail);
      if (number) {
        const cast = this.cast(head);
        if (!cast || cast.type.kind !== "num") throw new Unrecognised(`number ${x}`);
        return this.fromSource(cast.src, { kind: "num" }, cast.required);
      }
      const list = /^\??\.map\(\((\w+)\)=>(.*)\)\.to(?:List|Set)\(\)$/.exec(tail);
      if (list) {
        const cast = this.cast(head);
        if (!cast || cast.type.kind !== "list") throw new Unrecognised(`list ${x}`);
        let of = this.element(list[2].replaceAll(new RegExp(`\\b${list[1]}\\b`, "g"), "e"));
        if (cast.src.fill && of.kind === "class") of = { ...of, fill: cast.src.fill };
        return this.fromSource(cast.src, { kind: "list", of }, cast.required);
      }
      const map = /^\??\.map\(\((\w+),(\w+)\)=>MapEntry\((.*)\)\)$/.exec(tail);
      if (map) {
        const cast = this.cast(head);
        if (!cast || cast.type.kind !== "Map") throw new Unrecognised(`map ${x}`);
        const [keyExpr, valueExpr, ...rest] = splitTop(map[3], ",");
        if (rest.filter(Boolean).length) throw new Unrecognised(`map entry ${map[3]}`);
        const keys = keyExpr === map[1] ? "String" : keyExpr === `int.parse(${map[1]})` ? "int" : null;
        if (!keys) throw new Unrecognised(`map key ${keyExpr}`);
        const of = this.element(valueExpr.replaceAll(new RegExp(`\\b${map[2]}\\b`, "g"), "e"));
        return this.fromSource(cast.src, { kind: "map", keys, of }, cast.required);
      }
      throw new Unrecognised(x);
    }

    const cast = this.cast(x);
    if (cast) return this.fromSource(cast.src, cast.type, cast.required);

    const decode = /^\$enumDecode(Nullable)?\(_\$(\w+)EnumMap,(.*)\)$/.exec(x);
    if (decode) {
      const [srcExpr, unknownArg, ...rest] = splitTop(decode[3], ",").filter(Boolean);
      if (rest.length) throw new Unrecognised(x);
      if (!this.enums.has(decode[2])) throw new Unrecognised(`enum map ${decode[2]}`);
      const src = this.source(srcExpr);
      if (!src) throw new Unrecognised(x);
      const unknown =
        unknownArg === undefined ? "rejected"
        : unknownArg === "unknownValue:JsonKey.nullForUndefinedEnumValue" ? "null"
        : unknownArg.startsWith("unknownValue:") ? "tolerated"
        : null;
      if (!unknown) throw new Unrecognised(x);
      return this.fromSource(src, { kind: "enum", name: decode[2], unknown }, decode[1] !== "Nullable");
    }

    const converter = /^_\$JsonConverterFromJson<.*?>\((.*)\)$/.exec(x);
    if (converter) return this.parse(splitTop(converter[1], ",")[0]);

    const uri = /^Uri\.parse\((.*)\)$/.exec(x);
    if (uri) {
      const inner = this.parse(uri[1]);
      return { ...inner, type: { kind: "String", note: "parsed with Uri.parse" } };
    }

    const call = /^(?:const )?([A-Z]\w*)(?:\(\))?\.(\w+)\((.*)\)$/.exec(x);
    if (call) {
      const name = `${call[1]}.${call[2]}`;
      const fn = FUNCTIONS[name];
      if (fn) {
        const via = [`${name} (${this.where(fn.place)})`];
        if (fn.type === null) {
          const inner = this.parse(call[3]);
          return { ...inner, via: [...inner.via, ...via] };
        }
        const arg = this.argument(call[3]);
        return this.fromSource(arg.src, fn.type, fn.required ?? true, via);
      }
      if (call[2] === "fromJson") {
        const arg = this.argument(call[3]);
        if (arg.cast && arg.cast.kind !== "Map") throw new Unrecognised(x);
        return this.fromSource(arg.src, { kind: "class", name: call[1] }, arg.required);
      }
    }
    throw new Unrecognised(x);
  }

  /** A list element or map value: always required (`e as T`, no `?`). */
  private element(x: string): TypeSpec {
    const parsed = this.parse(x);
    if (parsed.key !== null || !parsed.required) throw new Unrecognised(`element ${x}`);
    return parsed.type;
  }
}

// ---------------------------------------------------------------------------------------------
// Whole files

function parseEnums(file: string, text: string, into: Map<string, EnumMap>): void {
  for (const m of text.matchAll(/const _\$(\w+)EnumMap = \{([^}]*)\};/g)) {
    const members: Record<string, string | number | null> = {};
    for (const entry of m[2].matchAll(/\w+\.(\w+): ('[^']*'|-?\d+|null),/g)) {
      members[entry[1]] = entry[2] === "null" ? null : entry[2].startsWith("'") ? entry[2].slice(1, -1) : Number(entry[2]);
    }
    const known = into.get(m[1]);
    if (known && JSON.stringify(known.members) !== JSON.stringify(members)) throw new Error(`enum ${m[1]} differs between files`);
    if (!known) into.set(m[1], { source: `${file}:${lineOf(text, m.index)}`, members });
  }
}

function parseClasses(file: string, text: string, parser: ExpressionParser, into: Record<string, ContractClass>): void {
  const definition = /(\w+)\s+_\$(\w+)FromJson\(\s*Map<String, dynamic> json,?\s*\)\s*(=>|\{)/g;
  for (const m of text.matchAll(definition)) {
    const name = m[2];
    const start = m.index + m[0].length;
    let expression: string;
    let checkKeys: ContractClass["checkKeys"];
    if (m[3] === "=>") {
      expression = splitTop(text.slice(start), ";")[0];
    } else {
      const body = text.slice(start - 1, matchClose(text, start - 1) + 1);
      const returned = /\breturn\s([\s\S]*);\s*\}$/.exec(body);
      if (!returned) throw new Error(`${name}: a fromJson body without a final return`);
      expression = returned[1];
      const check = /\$checkKeys\(([\s\S]*?)\);/.exec(body);
      if (check) {
        const list = (label: string) => {
          const found = new RegExp(`${label}:\\s*const\\s*\\[([^\\]]*)\\]`).exec(check[1]);
          return found ? [...found[1].matchAll(/'([^']*)'/g)].map((k) => k[1]) : [];
        };
        checkKeys = { required: list("requiredKeys"), disallowNull: list("disallowNullValues") };
      }
    }
    const flat = normalize(expression);
    const open = flat.indexOf("(");
    if (!/^\w+$/.test(flat.slice(0, open))) throw new Error(`${name}: not a constructor call: ${flat.slice(0, 80)}`);
    const close = matchClose(flat, open);
    const args = splitTop(flat.slice(open + 1, close), ",").filter(Boolean);
    const cascades = flat.slice(close + 1);
    const entries: Array<[string, string]> = args.map((arg, index) => {
      const named = /^(\w+):(?!:)([\s\S]*)$/.exec(arg);
      return named ? [named[1], named[2]] : [`#${index}`, arg];
    });
    if (cascades) {
      for (const cascade of splitTop(cascades.replace(/^\.\./, ""), "..")) {
        const assign = /^(\w+)=(.*)$/.exec(cascade);
        if (!assign) throw new Error(`${name}: cascade ${cascade}`);
        entries.push([assign[1], assign[2]]);
      }
    }
    const fields: Field[] = entries.map(([dart, value]) => {
      let parsed: Parsed;
      try {
        parsed = parser.parse(value);
      } catch (error) {
        if (error instanceof Unrecognised) throw new Error(`${file}: ${name}.${dart}: unrecognised ${error.message}\n  in: ${value}`);
        throw error;
      }
      if (parsed.key === null) throw new Error(`${name}.${dart}: no JSON key in ${value}`);
      const field: Field = { key: parsed.key, type: parsed.type, required: parsed.required, dart };
      if (parsed.read !== undefined) field.read = parsed.read;
      if ("default" in parsed) field.default = parsed.default;
      if (parsed.via.length) field.via = parsed.via.join("; ");
      return field;
    });
    if (into[name]) throw new Error(`${name} is parsed in two places`);
    into[name] = { source: `${file}:${lineOf(text, m.index)}`, generated: true, fields, ...(checkKeys ? { checkKeys } : {}) };
  }
}

/** `Event.fromJson`'s switch on type (and op): which class reads each event. */
function parseEventDispatch(file: string, text: string, into: Record<string, ContractClass>): void {
  const start = text.indexOf("factory Event.fromJson(Map<String, dynamic> json) {");
  if (start < 0) throw new Error("Event.fromJson not found in events.dart");
  const body = text.slice(start, matchClose(text, text.indexOf("{", start)) + 1);
  const outer = /switch \(json\['type'\] as String\) \{/.exec(body);
  if (!outer) throw new Error("Event.fromJson does not switch on json['type'] as String");
  const cases: Record<string, string> = {};
  let otherwise: string | null = null;
  let nested: { type: string; cases: Record<string, string>; otherwise: string | null } | null = null;
  for (const line of body.split("\n").map((l) => l.trim())) {
    const direct = /^case '(\w+)': return (\w+)\.fromJson\(json\);$/.exec(line);
    const opens = /^case '(\w+)':$/.exec(line);
    const fallback = /^default: return (\w+)\.fromJson\(json\);$/.exec(line);
    if (nested && /^switch \(json\['op'\] as String\) \{$/.test(line)) continue;
    if (direct) {
      (nested ? nested.cases : cases)[direct[1]] = direct[2];
    } else if (opens) {
      nested = { type: opens[1], cases: {}, otherwise: null };
    } else if (fallback) {
      if (nested) {
        nested.otherwise = fallback[1];
        const name = `Event:${nested.type}`;
        into[name] = {
          source: `${file}:${lineOf(text, start + body.indexOf(`case '${nested.type}':`))}`,
          generated: false,
          fields: [{ key: "op", type: { kind: "String" }, required: true }],
          dispatch: { key: "op", cases: nested.cases, otherwise: nested.otherwise },
        };
        cases[nested.type] = name;
        nested = null;
      } else {
        otherwise = fallback[1];
      }
    }
  }
  into.Event = {
    source: `${file}:${lineOf(text, start)}`,
    generated: false,
    fields: [{ key: "type", type: { kind: "String" }, required: true }],
    dispatch: { key: "type", cases, otherwise },
  };
}

/** `Message.fromJson`: `type` "stream" or "private", anything else throws. */
function parseMessageDispatch(file: string, text: string, into: Record<string, ContractClass>): void {
  const start = text.indexOf("static Message fromJson(Map<String, dynamic> json) {");
  if (start < 0) throw new Error("Message.fromJson not found in model.dart");
  const body = text.slice(start, matchClose(text, text.indexOf("{", start)) + 1);
  if (!body.includes("final type = json['type'] as String;")) throw new Error("Message.fromJson no longer reads type as String");
  const cases: Record<string, string> = {};
  for (const m of body.matchAll(/if \(type == '(\w+)'\) return (\w+)\.fromJson\(json\);/g)) cases[m[1]] = m[2];
  if (!/throw /.test(body)) throw new Error("Message.fromJson no longer throws on other types");
  into.Message = {
    source: `${file}:${lineOf(text, start)}`,
    generated: false,
    fields: [{ key: "type", type: { kind: "String" }, required: true }],
    dispatch: { key: "type", cases, otherwise: null },
  };
}

function references(type: TypeSpec, out: { classes: Set<string>; enums: Set<string>; rules: Set<string> }): void {
  switch (type.kind) {
    case "list":
    case "map":
      references(type.of, out);
      break;
    case "class":
      out.classes.add(type.name);
      break;
    case "enum":
      out.enums.add(type.name);
      break;
    case "rule":
      out.rules.add(type.rule);
      break;
    case "byProperty":
      for (const c of Object.values(type.cases)) references(c.type, out);
      break;
    default:
  }
}

/** The classes and enum maps of json_serializable files; `where` resolves hand-kept places. */
export function readGeneratedFiles(
  files: Array<{ file: string; text: string }>,
  where: (place: DartPlace) => string,
): { enumMaps: Map<string, EnumMap>; classes: Record<string, ContractClass> } {
  const enumMaps = new Map<string, EnumMap>();
  for (const { file, text } of files) parseEnums(file, text, enumMaps);
  const parser = new ExpressionParser(enumMaps, where);
  const classes: Record<string, ContractClass> = {};
  for (const { file, text } of files) parseClasses(file, text, parser, classes);
  return { enumMaps, classes };
}

export function generate(tree: FlutterTree): Contract {
  const files = PARSER_DIRS.flatMap((dir) => tree.list(dir).filter((f) => f.endsWith(".g.dart"))).sort();
  const texts = new Map<string, string>();
  const text = (file: string) => {
    if (!texts.has(file)) texts.set(file, tree.read(file));
    return texts.get(file)!;
  };
  const where = (place: DartPlace) => {
    const at = text(place.file).indexOf(place.find);
    if (at < 0) throw new Error(`hand-kept.ts: "${place.find}" is no longer in ${place.file}; review that entry`);
    return `${place.file}:${lineOf(text(place.file), at)}`;
  };

  const { enumMaps, classes } = readGeneratedFiles(files.map((file) => ({ file, text: text(file) })), where);
  parseEventDispatch("lib/api/model/events.dart", text("lib/api/model/events.dart"), classes);
  parseMessageDispatch("lib/api/model/model.dart", text("lib/api/model/model.dart"), classes);

  for (const [name, hand] of Object.entries(CLASSES)) {
    const { place, ...rest } = hand;
    if (classes[name]) throw new Error(`${name} is both generated and hand-kept`);
    classes[name] = { source: where(place), generated: false, ...rest };
  }
  for (const [name, conditions] of Object.entries(CONDITIONS)) {
    if (!classes[name]) throw new Error(`conditions for unknown class ${name}`);
    classes[name].conditions = conditions.map(({ place, ...rest }): Condition => ({ ...rest, source: where(place) }));
  }

  const enums: Record<string, EnumSpec> = {};
  for (const [name, map] of [...enumMaps].sort(([a], [b]) => a.localeCompare(b))) {
    enums[name] = { source: map.source, values: Object.values(map.members).filter((v): v is string | number => v !== null) };
  }
  const rules: Contract["rules"] = {};
  for (const [name, rule] of Object.entries(RULES)) rules[name] = { source: where(rule.place), description: rule.description };

  // Every reference resolves.
  // Besides the references in the contract, the checker's rules read these.
  const used = {
    classes: new Set<string>(["PollWidgetData", "PollNewOptionEventSubmessage", "PollQuestionEventSubmessage", "PollVoteEventSubmessage"]),
    enums: new Set<string>(["PropagateMode", "ReactionType", "PollEventSubmessageType"]),
    rules: new Set<string>(),
  };
  for (const cls of Object.values(classes)) {
    for (const field of [...(cls.fields ?? []), ...(cls.conditions ?? []).flatMap((c) => c.require)]) references(field.type, used);
    for (const type of cls.union ?? []) references(type, used);
    for (const target of Object.values(cls.dispatch?.cases ?? {})) used.classes.add(target);
    if (cls.dispatch?.otherwise) used.classes.add(cls.dispatch.otherwise);
    for (const rule of cls.rules ?? []) used.rules.add(rule);
  }
  for (const name of used.classes) if (!classes[name]) throw new Error(`class ${name} is referred to but neither generated nor hand-kept`);
  for (const name of used.enums) if (!enums[name]) throw new Error(`enum ${name} is referred to but has no map`);
  for (const name of used.rules) if (!rules[name]) throw new Error(`rule ${name} is referred to but not described`);

  const sorted: Record<string, ContractClass> = {};
  for (const name of Object.keys(classes).sort()) sorted[name] = classes[name];
  return {
    generatedBy: "scripts/flutter-contract/generate.ts (hand-kept parts: scripts/flutter-contract/hand-kept.ts)",
    flutter: { repository: "https://github.com/zulip/zulip-flutter", commit: tree.commit, committedAt: tree.committedAt, files },
    rules,
    enums,
    classes: sorted,
  };
}
