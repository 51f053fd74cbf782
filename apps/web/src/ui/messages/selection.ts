// The selected message of the list on screen (j/k and arrow keys move it, r replies to it).
import { signal } from "@preact/signals";

export const selectedMessageId = signal<number | null>(null);
