// Message widgets (polls and to-do lists), as Zulip 9.0 has them: a message whose content starts
// with `/poll` or `/todo` gets a first submessage of type "widget" describing it, and readers then
// attach submessages that change it (votes, options, tasks), each checked against its widget's type.
import { badRequest } from "../errors.ts";

export type WidgetType = "poll" | "todo";

/** The content of a message's "widget" submessage. */
export interface WidgetContent {
  widget_type: WidgetType;
  extra_data: PollExtraData | TodoExtraData;
}

interface PollExtraData {
  question: string;
  options: string[];
}

interface TodoExtraData {
  task_list_title: string;
  tasks: Array<{ task: string; desc: string }>;
}

const WIDGET_TYPES: readonly string[] = ["poll", "todo"];

/** A list item's marker (`- `, `* `) and the blanks around it, dropped from an option or a task. */
const LIST_MARKER = /^\s*[-*]?\s*/;

/** The lines after the command: the first is the title (question), the others its items, markers dropped. */
function titleAndItems(rest: string): { title: string; items: string[] } {
  const lines = rest.split(/\r\n|\r|\n/);
  const title = lines.shift()?.trim() ?? "";
  const items = lines.map((line) => line.trim().replace(LIST_MARKER, "")).filter((item) => item.length > 0);
  return { title, items };
}

/** The widget a message's content asks for, or null: its first word is `/poll` or `/todo`. */
export function widgetFromContent(content: string): WidgetContent | null {
  const command = /^\S*/.exec(content)![0];
  if (!command.startsWith("/")) return null;
  const type = command.slice(1);
  if (!WIDGET_TYPES.includes(type)) return null;
  const { title, items } = titleAndItems(content.slice(command.length));
  if (type === "poll") return { widget_type: "poll", extra_data: { question: title, options: items } };
  // A task and its description are separated by the first ": ".
  const tasks = items.map((item) => {
    const at = item.indexOf(": ");
    return at < 0 ? { task: item.trim(), desc: "" } : { task: item.slice(0, at).trim(), desc: item.slice(at + 2).trim() };
  });
  return { widget_type: "todo", extra_data: { task_list_title: title, tasks } };
}

/** The widget type a "widget" submessage's content names, or null when it names none. */
export function widgetTypeOf(content: string): string | null {
  try {
    const data: unknown = JSON.parse(content);
    if (data !== null && typeof data === "object" && "widget_type" in data && typeof data.widget_type === "string") return data.widget_type;
  } catch {
    // Not a widget's content: no type, as in Zulip.
  }
  return null;
}

// Checks of a submessage's data, named and worded as Zulip's validators report them.
type Check = (name: string, value: unknown) => void;

const isString: Check = (name, value) => {
  if (typeof value !== "string") throw badRequest(`${name} is not a string`);
};
const isBoolean: Check = (name, value) => {
  if (typeof value !== "boolean") throw badRequest(`${name} is not a boolean`);
};
function isInteger(name: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value)) throw badRequest(`${name} is not an integer`);
}
const oneOf =
  (...allowed: number[]): Check =>
  (name, value) => {
    isInteger(name, value);
    if (!allowed.includes(value)) throw badRequest(`Invalid ${name}`);
  };
const between =
  (low: number, high: number): Check =>
  (name, value) => {
    isInteger(name, value);
    if (value < low) throw badRequest(`${name} is too small`);
    if (value > high) throw badRequest(`${name} is too large`);
  };

/** The highest option or task index the widgets accept (the web app's limit too). */
const MAX_IDX = 1000;

/** `data` has exactly these keys, each passing its check. */
function checkExactly(what: string, data: Record<string, unknown>, checks: Record<string, Check>): void {
  for (const [key, check] of Object.entries(checks)) {
    if (!(key in data)) throw badRequest(`${key} key is missing from ${what}`);
    check(`${what}["${key}"]`, data[key]);
  }
  const unexpected = Object.keys(data).filter((key) => !(key in checks));
  if (unexpected.length > 0) throw badRequest(`Unexpected arguments: ${unexpected.join(", ")}`);
}

/** `data` is an object with a string `type`. */
function typedData(what: string, data: unknown): Record<string, unknown> & { type: string } {
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw badRequest(`${what} is not a dict`);
  const record = data as Record<string, unknown>;
  if (!("type" in record)) throw badRequest(`type key is missing from ${what}`);
  isString(`${what}["type"]`, record.type);
  return record as Record<string, unknown> & { type: string };
}

/** A poll's submessage: a vote, a new option, or (its author only) the question. */
export function checkPollData(data: unknown, isWidgetAuthor: boolean): void {
  const poll = typedData("poll data", data);
  switch (poll.type) {
    case "vote":
      return checkExactly("poll data", poll, { type: isString, key: isString, vote: oneOf(1, -1) });
    case "question":
      if (!isWidgetAuthor) throw badRequest("You can't edit a question unless you are the author.");
      return checkExactly("poll data", poll, { type: isString, question: isString });
    case "new_option":
      return checkExactly("poll data", poll, { type: isString, option: isString, idx: between(0, MAX_IDX) });
    default:
      throw badRequest(`Unknown type for poll data: ${poll.type}`);
  }
}

/** A to-do list's submessage: a new task, striking one, or (its author only) the list's title. */
export function checkTodoData(data: unknown, isWidgetAuthor: boolean): void {
  const todo = typedData("todo data", data);
  switch (todo.type) {
    case "new_task":
      return checkExactly("todo data", todo, { type: isString, key: between(0, MAX_IDX), task: isString, desc: isString, completed: isBoolean });
    case "strike":
      return checkExactly("todo data", todo, { type: isString, key: isString });
    case "new_task_list_title":
      if (!isWidgetAuthor) throw badRequest("You can't edit the task list title unless you are the author.");
      return checkExactly("todo data", todo, { type: isString, title: isString });
    default:
      throw badRequest(`Unknown type for todo data: ${todo.type}`);
  }
}
