// Reads a JSON value the way zulip-flutter's parsers do, from the contract generated out of them
// (test/clients/flutter/contract.json, scripts/flutter-contract/generate.ts): a required key that
// is missing or null, a value of the wrong type, an enum value the parser does not take, or a
// dispatch the parser throws on is a failure, reported with its path. Unknown keys are fine, as
// they are to the app. Where Dart would stop at the first throw, every failure is listed.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Contract, ContractClass, Field, TypeSpec } from "../../scripts/flutter-contract/contract.ts";

export const contract: Contract = JSON.parse(readFileSync(join(__dirname, "..", "clients", "flutter", "contract.json"), "utf8"));

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

function describe(value: unknown): string {
  if (value === undefined) return "missing";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function typeName(type: TypeSpec): string {
  switch (type.kind) {
    case "list":
      return `List<${typeName(type.of)}>`;
    case "map":
      return `Map<${type.keys}, ${typeName(type.of)}>`;
    case "class":
      return type.name;
    case "enum":
      return `enum ${type.name}`;
    case "rule":
      return type.rule;
    case "byProperty":
      return `value by ${type.property}`;
    default:
      return type.kind;
  }
}

class Reader {
  readonly failures: string[] = [];

  private fail(path: string, message: string): void {
    this.failures.push(`${path}: ${message}`);
  }

  readClass(name: string, value: unknown, path: string, fill?: Record<string, unknown>): void {
    const cls = contract.classes[name];
    if (!cls) throw new Error(`the flutter contract has no class ${name}`);
    if (cls.union) {
      const fits = cls.union.some((type) => {
        const trial = new Reader();
        trial.readType(type, value, path);
        return trial.failures.length === 0;
      });
      if (!fits) this.fail(path, `${describe(value)} is none of ${cls.union.map(typeName).join(" | ")} (${name}, ${cls.source})`);
      return;
    }
    if (!isObject(value)) {
      this.fail(path, `expected an object for ${name}, got ${describe(value)} (${cls.source})`);
      return;
    }
    let object = value;
    if (fill) {
      object = { ...value };
      for (const [key, filled] of Object.entries(fill)) if (!(key in object)) object[key] = filled;
    }
    for (const key of cls.checkKeys?.required ?? []) {
      if (!(key in object)) this.fail(`${path}.${key}`, `required key missing ($checkKeys in ${name}, ${cls.source})`);
    }
    for (const key of cls.checkKeys?.disallowNull ?? []) {
      if (object[key] === null) this.fail(`${path}.${key}`, `must not be null ($checkKeys in ${name}, ${cls.source})`);
    }
    for (const field of cls.fields ?? []) this.readField(field, object, path, name, cls);
    for (const condition of cls.conditions ?? []) {
      const at = object[condition.when.key];
      const applies = condition.when.in ? condition.when.in.includes(at as string | number) : at !== undefined && at !== null;
      if (!applies) continue;
      for (const field of condition.require) this.readField(field, object, path, `${name} when ${condition.when.key}=${describe(at)}`, { source: condition.source });
    }
    for (const rule of cls.rules ?? []) this.readRule(rule, object, path);
    if (cls.dispatch) {
      const on = object[cls.dispatch.key];
      if (typeof on !== "string") return; // reported by the field that reads it
      const target = cls.dispatch.cases[on] ?? cls.dispatch.otherwise;
      if (target) this.readClass(target, object, path);
      else this.fail(`${path}.${cls.dispatch.key}`, `${describe(on)} is not one of ${Object.keys(cls.dispatch.cases).join(", ")}: ${name}.fromJson throws (${cls.source})`);
    }
  }

  /** The value a field reads, or null when a step on the way is not an object (reported). */
  private locate(field: Field, object: JsonObject, path: string): { present: boolean; value: unknown; at: string } | null {
    const read = field.read ?? [field.key];
    const walk = (steps: string[]): { present: boolean; value: unknown; at: string } | null => {
      let current: JsonObject = object;
      let at = path;
      for (const [i, step] of steps.entries()) {
        if (i === steps.length - 1) return { present: step in current && current[step] !== undefined, value: current[step], at: `${at}.${step}` };
        const next = current[step];
        if (!isObject(next)) {
          this.fail(`${at}.${step}`, `expected an object (read for ${field.key}), got ${describe(next)}`);
          return null;
        }
        current = next;
        at = `${at}.${step}`;
      }
      return { present: true, value: current, at };
    };
    if (Array.isArray(read)) return walk(read);
    // {...json['message'] as Map, 'flags': json['flags']}: the added keys are present, maybe null.
    const base = walk(read.object);
    if (!base) return null;
    if (!isObject(base.value)) {
      this.fail(base.at, `expected an object, got ${describe(base.value)}`);
      return null;
    }
    const merged: JsonObject = { ...base.value };
    for (const [key, steps] of Object.entries(read.with)) merged[key] = walk(steps)?.value ?? null;
    return { present: true, value: merged, at: base.at };
  }

  private readField(field: Field, object: JsonObject, path: string, owner: string, cls: Pick<ContractClass, "source">): void {
    const found = this.locate(field, object, path);
    if (!found) return;
    if (field.type.kind === "byProperty") {
      this.readByProperty(field.type, found.value, object, found.at, path);
      return;
    }
    if (!found.present || found.value === null) {
      if (field.required) {
        this.fail(found.at, `required ${typeName(field.type)} is ${found.present ? "null" : "missing"} (${owner}${field.dart ? `.${field.dart}` : ""}, ${cls.source})`);
      }
      return;
    }
    this.readType(field.type, found.value, found.at);
  }

  private readByProperty(type: Extract<TypeSpec, { kind: "byProperty" }>, value: unknown, object: JsonObject, at: string, path: string): void {
    const property = object[type.property];
    if (typeof property !== "string") {
      this.fail(`${path}.${type.property}`, `required String (the value is read by it), got ${describe(property)}`);
      return;
    }
    const entry = type.cases[property];
    if (!entry) return; // a property the app does not know: ignored
    if (value === undefined || value === null) {
      if (entry.required) this.fail(at, `required ${typeName(entry.type)} for ${type.property} ${property}, got ${describe(value)}`);
      return;
    }
    this.readType(entry.type, value, at);
  }

  readType(type: TypeSpec, value: unknown, at: string): void {
    if (type.kind === "dynamic") return;
    if (value === undefined || value === null) {
      this.fail(at, `expected ${typeName(type)}, got ${describe(value)}`);
      return;
    }
    switch (type.kind) {
      case "int":
        if (!Number.isInteger(value)) this.fail(at, `expected int, got ${describe(value)}`);
        return;
      case "num":
        if (typeof value !== "number") this.fail(at, `expected num, got ${describe(value)}`);
        return;
      case "String":
        if (typeof value !== "string") this.fail(at, `expected String, got ${describe(value)}`);
        else if (type.pattern && !new RegExp(type.pattern).test(value)) this.fail(at, `${describe(value)} does not match ${type.pattern} (${type.note ?? ""})`);
        return;
      case "bool":
        if (typeof value !== "boolean") this.fail(at, `expected bool, got ${describe(value)}`);
        return;
      case "Map":
        if (!isObject(value)) this.fail(at, `expected an object, got ${describe(value)}`);
        return;
      case "list":
        if (!Array.isArray(value)) this.fail(at, `expected a list of ${typeName(type.of)}, got ${describe(value)}`);
        else value.forEach((element, i) => this.readType(type.of, element, `${at}[${i}]`));
        return;
      case "map":
        if (!isObject(value)) {
          this.fail(at, `expected an object (${typeName(type)}), got ${describe(value)}`);
          return;
        }
        for (const [key, element] of Object.entries(value)) {
          // int.parse: decimal, an optional sign, or 0x hex.
          if (type.keys === "int" && !/^[+-]?(\d+|0[xX][0-9a-fA-F]+)$/.test(key)) this.fail(`${at}.${key}`, `key ${describe(key)} is not an int (int.parse)`);
          this.readType(type.of, element, `${at}.${key}`);
        }
        return;
      case "class":
        this.readClass(type.name, value, at, type.fill);
        return;
      case "enum": {
        const values = contract.enums[type.name].values;
        const known = values.includes(value as string | number) || (type.also ?? []).includes(value as string | number);
        if (!known && type.unknown === "rejected") {
          this.fail(at, `${describe(value)} is not one of ${values.map((v) => JSON.stringify(v)).join(", ")} (enum ${type.name}, no unknown value, ${contract.enums[type.name].source})`);
        }
        return;
      }
      case "rule":
        if (!isObject(value)) this.fail(at, `expected an object, got ${describe(value)}`);
        else this.readRule(type.rule, value, at);
        return;
      case "byProperty":
        throw new Error("a byProperty type is read by its field");
    }
  }

  private readRule(rule: string, object: JsonObject, path: string): void {
    const source = contract.rules[rule]?.source;
    if (!source) throw new Error(`the flutter contract describes no rule ${rule}`);
    const optional = (key: string, kind: "number" | "string"): number | string | null => {
      const value = object[key];
      if (value === undefined || value === null) return null;
      if (typeof value !== kind) {
        this.fail(`${path}.${key}`, `expected ${kind === "number" ? "num" : "String"}, got ${describe(value)} (${rule}, ${source})`);
        return null;
      }
      return value as number | string;
    };
    switch (rule) {
      case "UpdateMessageMoveData.tryParseFromJson": {
        const origStream = optional("stream_id", "number");
        const newStream = optional("new_stream_id", "number") ?? origStream;
        const origTopic = optional("orig_subject", "string");
        const newTopic = optional("subject", "string") ?? origTopic;
        const mode = optional("propagate_mode", "string");
        if (mode !== null && !contract.enums.PropagateMode.values.includes(mode)) {
          this.fail(`${path}.propagate_mode`, `${describe(mode)} is not a PropagateMode (${source})`);
        }
        if (newStream === origStream && newTopic === origTopic) {
          if (mode !== null) this.fail(path, `propagate_mode present but no new channel or topic: the app throws (${source})`);
          return;
        }
        for (const [key, value] of [["stream_id", origStream], ["orig_subject", origTopic], ["propagate_mode", mode]] as const) {
          if (value === null) this.fail(`${path}.${key}`, `required for a move (new_stream_id or subject given), got ${describe(object[key])} (${source})`);
        }
        return;
      }
      case "ChannelDeleteEvent._readChannelIds": {
        const ids = object.stream_ids;
        if (ids !== undefined && ids !== null) {
          this.readType({ kind: "list", of: { kind: "int" } }, ids, `${path}.stream_ids`);
          return;
        }
        const streams = object.streams;
        if (!Array.isArray(streams)) {
          this.fail(`${path}.streams`, `stream_ids is absent, so streams must be a list, got ${describe(streams)} (${source})`);
          return;
        }
        streams.forEach((stream, i) => {
          if (!isObject(stream) || !Number.isInteger(stream.stream_id)) this.fail(`${path}.streams[${i}]`, `expected an object with stream_id: int, got ${describe(stream)} (${source})`);
        });
        return;
      }
      case "Submessage.parseSubmessagesJson": {
        const submessages = object.submessages;
        if (!Array.isArray(submessages) || submessages.length === 0 || !submessages.every(isObject)) return; // reported by the field
        const decode = (i: number): JsonObject | null => {
          const content = submessages[i].content;
          let decoded: unknown;
          try {
            decoded = typeof content === "string" ? JSON.parse(content) : undefined;
          } catch {
            decoded = undefined;
          }
          if (!isObject(decoded)) this.fail(`${path}.submessages[${i}].content`, `not a JSON object in a string: ${describe(content)} (${source})`);
          return isObject(decoded) ? decoded : null;
        };
        if (submessages[0].sender_id !== object.sender_id) {
          this.fail(`${path}.submessages[0].sender_id`, `the first submessage must be from the message's sender (asserted in debug builds, ${source})`);
        }
        const widget = decode(0);
        if (!widget) return;
        if (typeof widget.widget_type !== "string") {
          this.fail(`${path}.submessages[0].content.widget_type`, `required String, got ${describe(widget.widget_type)} (${source})`);
          return;
        }
        if (widget.widget_type !== "poll") return; // UnsupportedWidgetData
        this.readClass("PollWidgetData", widget, `${path}.submessages[0].content`);
        const events: Record<string, string> = { new_option: "PollNewOptionEventSubmessage", question: "PollQuestionEventSubmessage", vote: "PollVoteEventSubmessage" };
        for (let i = 1; i < submessages.length; i++) {
          const event = decode(i);
          if (!event) continue;
          const at = `${path}.submessages[${i}].content`;
          if (typeof event.type !== "string" || !contract.enums.PollEventSubmessageType.values.includes(event.type)) {
            this.fail(`${at}.type`, `${describe(event.type)} is not a PollEventSubmessageType (${source})`);
          } else if (events[event.type]) {
            this.readClass(events[event.type], event, at);
          }
        }
        return;
      }
      case "UserStatusChange._emojiFromJson": {
        const [name, code, type] = [object.emoji_name, object.emoji_code, object.reaction_type];
        if ([name, code, type].some((v) => v === undefined || v === null || v === "")) return;
        if (!contract.enums.ReactionType.values.includes(type as string)) {
          this.fail(`${path}.reaction_type`, `${describe(type)} is not a ReactionType (${source})`);
        }
        return;
      }
      default:
        throw new Error(`the checker does not implement rule ${rule}`);
    }
  }
}

export interface FlutterReading {
  /** Every place the app's parser would throw, with its path; empty when it parses. */
  failures: string[];
  /** The class the app's dispatch picks for this value (e.g. "SubscriptionPeerAddEvent"), or the class itself. */
  parsedAs: string;
}

/** Reads `value` as zulip-flutter's `className.fromJson` would. */
export function readAsFlutter(className: string, value: unknown): FlutterReading {
  const reader = new Reader();
  reader.readClass(className, value, "$");
  let parsedAs = className;
  for (;;) {
    const dispatch = contract.classes[parsedAs]?.dispatch;
    if (!dispatch || !isObject(value)) break;
    const on = value[dispatch.key];
    const next = typeof on === "string" ? (dispatch.cases[on] ?? dispatch.otherwise) : null;
    if (!next) break;
    parsedAs = next;
  }
  return { failures: reader.failures, parsedAs };
}
