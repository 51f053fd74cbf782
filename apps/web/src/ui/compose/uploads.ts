// Files into a message, as Zulip does it: a `[Uploading name…]()` placeholder at the caret,
// replaced by `[name](/user_uploads/…)` when POST /user_uploads answers, or removed with an error.
import { ApiError, uploadFile } from "../../api/client";
import { registered } from "../../state/store";
import { insertAtCaret, replaceText, spacedForCaret } from "./textarea";

export interface UploadStatus {
  id: number;
  name: string;
  fraction: number;
}

export interface UploadHooks {
  onProgress(status: UploadStatus | null, id: number): void;
  onError(message: string): void;
}

let nextUploadId = 0;

/** The largest file the server takes, in bytes; 0 when uploads are off. */
export function maxUploadBytes(): number {
  const mib = registered.value?.max_file_upload_size_mib;
  return mib === undefined ? Number.POSITIVE_INFINITY : mib * 1024 * 1024;
}

/** The files of a drop or paste, or none (plain text, links). */
export function filesOf(data: DataTransfer | null): File[] {
  if (!data) return [];
  if (data.files.length > 0) return [...data.files];
  // Some browsers give a pasted screenshot only as an item.
  return [...data.items].filter((item) => item.kind === "file").flatMap((item) => {
    const file = item.getAsFile();
    return file ? [file] : [];
  });
}

export function uploadInto(field: HTMLTextAreaElement, files: readonly File[], hooks: UploadHooks): void {
  const limit = maxUploadBytes();
  for (const file of files) {
    if (limit === 0) {
      hooks.onError("File uploads are disabled on this server.");
      return;
    }
    if (file.size > limit) {
      hooks.onError(`"${file.name}" is larger than the ${registered.value?.max_file_upload_size_mib} MiB upload limit.`);
      continue;
    }
    const id = ++nextUploadId;
    // Brackets would end the link text early.
    const name = file.name.replace(/[[\]]/g, "") || "file";
    const marker = `[Uploading ${name}…]()`;
    insertAtCaret(field, spacedForCaret(field, `${marker} `));
    hooks.onProgress({ id, name, fraction: 0 }, id);
    uploadFile(file, (fraction) => hooks.onProgress({ id, name, fraction }, id))
      .then(({ url }) => {
        replaceText(field, marker, `[${name}](${url})`);
      })
      .catch((error: unknown) => {
        replaceText(field, `${marker} `, "") || replaceText(field, marker, "");
        hooks.onError(error instanceof ApiError ? `${name}: ${error.message}` : `${name}: the upload failed.`);
      })
      .finally(() => hooks.onProgress(null, id));
  }
}
