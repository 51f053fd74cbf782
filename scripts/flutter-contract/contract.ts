// The shape of test/clients/flutter/contract.json: what zulip-flutter's JSON parsers require of each
// object they read, written by scripts/flutter-contract/generate.ts and read by
// test/support/flutter-contract.ts. Dart semantics are kept: `as int` is a strict integer, `as num`
// any number; a field that is not required may be absent or null.

/** A value's type, as the parser casts or decodes it. */
export type TypeSpec =
  | { kind: "int" } // `as int`, or an `int()` pattern
  | { kind: "num" } // `as num` (then .toInt() / .toDouble(): any JSON number)
  | { kind: "String"; pattern?: string; note?: string }
  | { kind: "bool" }
  | { kind: "Map" } // `as Map<String, dynamic>` with no further reading
  | { kind: "dynamic" } // read without a cast
  | { kind: "list"; of: TypeSpec }
  /** keys "int": each key goes through int.parse. */
  | { kind: "map"; keys: "String" | "int"; of: TypeSpec }
  /** `fill`: keys the parser sets when absent before reading (putIfAbsent). */
  | { kind: "class"; name: string; fill?: Record<string, unknown> }
  /**
   * `$enumDecode`: unknown "rejected" (no unknownValue: the value must be listed), "tolerated"
   * (unknownValue given), or "null" (JsonKey.nullForUndefinedEnumValue). `also`: values a converter
   * maps onto listed ones first.
   */
  | { kind: "enum"; name: string; unknown: "rejected" | "tolerated" | "null"; also?: Array<string | number> }
  /** A value read according to a sibling key (`_readValue` switches on `property`). */
  | { kind: "byProperty"; property: string; cases: Record<string, { type: TypeSpec; required: boolean }>; otherwise: "ignored" }
  /** A check the checker implements by this name (see `rules` in the contract). */
  | { kind: "rule"; rule: string };

/** How a field's value is found: a path of keys from the object (`[]` = the object itself). */
export type Read = string[] | { object: string[]; with: Record<string, string[]> };

export interface Field {
  /** The JSON key as named in the parser (for a path or `self` read, the parser's key argument). */
  key: string;
  /** Default [key]. Intermediate steps must be JSON objects (the parser casts them). */
  read?: Read;
  type: TypeSpec;
  /** true: present and non-null. false: absent or null accepted. */
  required: boolean;
  /** The value the parser uses when absent or null (`?? default`). */
  default?: unknown;
  /** The Dart field (constructor argument) this feeds. */
  dart?: string;
  /** The readValue helper or hand-written function involved, with where it is. */
  via?: string;
}

/**
 * A requirement that applies when a key has one of some values, or (no `in`) is present and
 * non-null: checks a hand-written fromJson adds after the generated parse ("crunchy shell").
 */
export interface Condition {
  when: { key: string; in?: Array<string | number> };
  require: Field[];
  source: string;
}

export interface ContractClass {
  /** flutter file:line of the parser this entry is made from. */
  source: string;
  /** false: a hand-kept entry (the Dart fromJson is hand-written), see `handKept` in the generator. */
  generated: boolean;
  fields?: Field[];
  /** json_serializable's `$checkKeys`. */
  checkKeys?: { required: string[]; disallowNull: string[] };
  conditions?: Condition[];
  /** The class's fromJson switches on a key; `otherwise` null: any other value throws. */
  dispatch?: { key: string; cases: Record<string, string>; otherwise: string | null };
  /** The value is any one of these (not necessarily an object). */
  union?: TypeSpec[];
  /** Named checks (TypeSpec rule) the checker implements, applied to the whole object. */
  rules?: string[];
}

export interface EnumSpec {
  source: string;
  values: Array<string | number>;
}

export interface Contract {
  generatedBy: string;
  flutter: { repository: string; commit: string; committedAt: string; files: string[] };
  /** Named checks the checker implements, with what each stands for. */
  rules: Record<string, { source: string; description: string }>;
  enums: Record<string, EnumSpec>;
  classes: Record<string, ContractClass>;
}
