// Compose's state other parts of the client drive: open it (reply, new topic, keyboard
// shortcuts), put text in it (quote and reply), hand it files (drops on the message list), and
// hear about sends (local echo).
import { signal } from "@preact/signals";
import type { ComposeRecipient } from "./recipient";

export const composeOpen = signal(false);
/** The text being written and its recipient (null: not chosen yet, the narrow's). */
export const composeText = signal("");
export const composeRecipient = signal<ComposeRecipient | null>(null);

export interface ComposeRequest {
  /** null: the narrow's recipient; undefined: keep the current one. */
  recipient?: ComposeRecipient | null;
  /** Text to add at the caret (e.g. a quote). */
  text?: string;
  files?: File[];
  seq: number;
}

/** The latest request; ComposeBox acts on each new `seq` once. */
export const composeRequest = signal<ComposeRequest | null>(null);
let seq = 0;

export function openCompose(options: { recipient?: ComposeRecipient | null; text?: string } = {}): void {
  composeRequest.value = { ...options, seq: ++seq };
}

export function closeCompose(): void {
  composeOpen.value = false;
}

/** Adds text at the compose caret, opening compose first (quote and reply). */
export function insertIntoCompose(text: string): void {
  openCompose({ text });
}

/** Uploads files into the compose box, opening it first. */
export function dropFilesIntoCompose(files: File[]): void {
  if (files.length > 0) composeRequest.value = { files, seq: ++seq };
}

/** Handlers to spread on an element (the message list) so files dropped there go to compose. */
export function useDropUploads(): { onDragOver(event: DragEvent): void; onDrop(event: DragEvent): void } {
  return dropHandlers;
}

const hasFiles = (event: DragEvent) => [...(event.dataTransfer?.types ?? [])].includes("Files");

const dropHandlers = {
  onDragOver(event: DragEvent) {
    if (!hasFiles(event)) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
  },
  onDrop(event: DragEvent) {
    if (!hasFiles(event)) return;
    event.preventDefault();
    dropFilesIntoCompose([...(event.dataTransfer?.files ?? [])]);
  },
};

export interface SentMessage {
  /** Our id for it, which the server echoes as `local_message_id` in the message event. */
  localId: string;
  queueId: string | undefined;
  recipient: ComposeRecipient;
  content: string;
  state: "sending" | "sent" | "failed";
  /** The message id, once sent. */
  id?: number;
}

type SendListener = (message: SentMessage) => void;
const sendListeners = new Set<SendListener>();

/** Hears every send (sending, then sent or failed), e.g. for local echo; returns the unsubscribe. */
export function addSendListener(listener: SendListener): () => void {
  sendListeners.add(listener);
  return () => sendListeners.delete(listener);
}

export function notifySend(message: SentMessage): void {
  for (const listener of sendListeners) {
    try {
      listener(message);
    } catch (error) {
      console.error(error);
    }
  }
}
