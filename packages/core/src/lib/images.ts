// Uploaded images made into avatars and custom emoji (Zulip's resize_avatar and resize_emoji in
// zerver/lib/upload.py), on sharp. sharp decodes and encodes on libuv's thread pool, so nothing
// here blocks the event loop: every call is one of its promise methods, none synchronous.
//
// An upload is small (UploadConfig.maxImageBytes, 5 MiB by default) and sharp wants the whole image
// anyway, so it is read into one bounded Buffer. What a few megabytes decode to is not small: a
// crafted PNG or GIF of 5 MiB can claim billions of pixels. Every decode is therefore bounded by
// MAX_IMAGE_PIXELS, checked on the header before any pixel is decoded.
import type { Readable } from "node:stream";
import type { Metadata, Sharp, SharpConstructor } from "sharp";
import { FileTooLargeError } from "@chat/storage";
import { JsonableError } from "../errors.ts";

/** Zulip's sizes: avatars 100 and 500 pixels square, custom emoji 64. */
export const DEFAULT_AVATAR_SIZE = 100;
export const MEDIUM_AVATAR_SIZE = 500;
export const DEFAULT_EMOJI_SIZE = 64;

/**
 * The most pixels an upload may decode to, every frame of an animation counted. 25 million covers
 * a 6000×4000 photo (24 MP), the largest a 5 MiB JPEG from a camera or phone plausibly holds, and
 * an animated emoji of 128×128 with 1,500 frames; decoded as RGBA it is at most 100 MB, held by one
 * of libuv's few threads for a moment. sharp's own default (268 million, about 1 GB decoded) is
 * too generous for a server that resizes whatever any member sends.
 */
export const MAX_IMAGE_PIXELS = 25_000_000;

let loadedSharp: SharpConstructor | null = null;

/** sharp (and libvips with it, about 19 MB) is loaded with the first image, not by every process. */
function sharp(): SharpConstructor {
  if (loadedSharp === null) {
    loadedSharp = require("sharp") as SharpConstructor;
    // libvips' operation cache keeps recent results for reuse; every upload is a new image, so it
    // would only hold decoded pixels in memory.
    loadedSharp.cache(false);
  }
  return loadedSharp;
}

/**
 * Images being resized at once; the rest wait their turn. Each holds one of libuv's threads (four
 * by default) while it runs, and those threads also serve the local storage's file reads and
 * writes and DNS lookups, which must not queue behind a burst of uploads.
 */
const MAX_CONCURRENT_IMAGES = 2;
let running = 0;
/**
 * Waiting work by requester, served round-robin (a Map iterates in insertion order; a requester
 * served goes to the back): one member's burst of uploads waits behind itself, while another
 * member's one upload waits for at most one image of each requester ahead of it.
 */
const waiting = new Map<string, Array<() => void>>();

function nextWaiting(): (() => void) | undefined {
  for (const [requester, queue] of waiting) {
    const next = queue.shift()!;
    waiting.delete(requester);
    if (queue.length > 0) waiting.set(requester, queue);
    return next;
  }
  return undefined;
}

async function inImageSlot<T>(requester: string, work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_IMAGES) {
    await new Promise<void>((resolve) => {
      const queue = waiting.get(requester);
      if (queue) queue.push(resolve);
      else waiting.set(requester, [resolve]);
    });
  } else {
    running++;
  }
  try {
    return await work();
  } finally {
    // The slot passes straight to the next in line, or is freed.
    const next = nextWaiting();
    if (next) next();
    else running--;
  }
}

/** Raster formats people upload as avatars and emoji; SVG, PDF, HEIF and the rest are refused. */
const ACCEPTED_FORMATS: Record<string, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  tiff: "image/tiff",
};

/** Zulip's BadImageError. */
export class BadImageError extends JsonableError {
  constructor(msg: string) {
    super(msg, { code: "BAD_IMAGE" });
  }
}

const undecodable = () => new BadImageError("Could not decode image; did you upload an image file?");
const tooManyPixels = () => new BadImageError("Image size exceeds limit.");

/** Zulip's refusal of an avatar or emoji file past the limit (MAX_AVATAR_FILE_SIZE_MIB). */
export function imageTooLargeError(maxBytes: number): JsonableError {
  const mib = maxBytes / (1024 * 1024);
  return new JsonableError(`Uploaded file is larger than the allowed limit of ${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`);
}

/**
 * Reads an upload's stream into one Buffer of at most `maxBytes`; past it, rejects with
 * FileTooLargeError (and stops reading), as storage's `put` does, so receiveSingleFile refuses it.
 */
export function readBoundedBuffer(stream: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | null) => {
      if (done) return;
      done = true;
      stream.off("data", onData);
      if (error) {
        stream.destroy();
        reject(error);
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(new FileTooLargeError(maxBytes));
      chunks.push(chunk);
    };
    stream.on("data", onData);
    stream.once("end", () => finish(null));
    stream.once("error", (error) => finish(error));
    stream.once("close", () => finish(new Error("upload stream closed before its end")));
  });
}

/** An upload as it was sent, with the type its bytes (not the client) say it has. */
export interface CheckedImage {
  data: Buffer;
  contentType: string;
  format: string;
  /** Frames: more than one for an animation. */
  pages: number;
}

function decoder(data: Buffer, options: { animated?: boolean } = {}): Sharp {
  // failOn "warning" (sharp's default, kept explicit) refuses truncated or damaged data.
  return sharp()(data, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "warning", animated: options.animated ?? false });
}

/** The image's header: its format, size and frames, before any pixel is decoded. */
export async function checkImage(data: Buffer): Promise<CheckedImage> {
  let metadata: Metadata;
  try {
    metadata = await sharp()(data, { limitInputPixels: MAX_IMAGE_PIXELS }).metadata();
  } catch (error) {
    throw decodeFailure(error);
  }
  const contentType = metadata.format === undefined ? undefined : ACCEPTED_FORMATS[metadata.format];
  if (contentType === undefined || !metadata.width || !metadata.height) throw undecodable();
  const pages = Math.max(1, metadata.pages ?? 1);
  const pageHeight = metadata.pageHeight ?? metadata.height;
  if (metadata.width * pageHeight * pages > MAX_IMAGE_PIXELS) throw tooManyPixels();
  return { data, contentType, format: metadata.format!, pages };
}

/** sharp's failures on pixel data: the limit is the client's image, anything else undecodable. */
function decodeFailure(error: unknown): JsonableError {
  if (error instanceof JsonableError) return error;
  return error instanceof Error && /pixel limit/i.test(error.message) ? tooManyPixels() : undecodable();
}

/**
 * How much of an upload's start imageDimensions is given: any raster header fits (a JPEG's EXIF
 * segment, before its size, is at most 64 KiB).
 */
export const IMAGE_HEADER_BYTES = 256 * 1024;

/**
 * An uploaded image's size as shown (turned upright), read from the start of its bytes only: no
 * pixel is decoded. Null when sharp cannot read a size from them (not an image, or damaged).
 */
export async function imageDimensions(head: Buffer, requester = ""): Promise<{ width: number; height: number } | null> {
  // libwebp wants the whole file even for its header; WebP's header is simple enough to read here.
  const webp = webpDimensions(head);
  if (webp !== undefined) return webp;
  try {
    const metadata = await inImageSlot(requester, () => sharp()(head, { failOn: "none" }).metadata());
    const { width, height } = metadata;
    const valid = (n: number | undefined): n is number => n !== undefined && Number.isSafeInteger(n) && n > 0 && n <= 2_147_483_647;
    if (!valid(width) || !valid(height)) return null;
    // EXIF orientations 5 to 8 turn the image a quarter: browsers show it upright.
    return (metadata.orientation ?? 1) >= 5 ? { width: height, height: width } : { width, height };
  } catch {
    return null;
  }
}

/**
 * A WebP's canvas size from its first chunk (VP8X, VP8L or VP8, per the WebP container spec), null
 * when that chunk is damaged, undefined when the bytes are not a WebP. EXIF orientation is left
 * aside: WebP from cameras is rare, and the chunk holding it may come after the image.
 */
function webpDimensions(head: Buffer): { width: number; height: number } | null | undefined {
  if (head.length < 12 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WEBP") return undefined;
  if (head.length < 30) return null;
  const chunk = head.toString("latin1", 12, 16);
  if (chunk === "VP8X") return { width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1 };
  if (chunk === "VP8L") {
    if (head[20] !== 0x2f) return null;
    const bits = head.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 ") {
    if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return null;
    const width = head.readUInt16LE(26) & 0x3fff;
    const height = head.readUInt16LE(28) & 0x3fff;
    return width > 0 && height > 0 ? { width, height } : null;
  }
  return null;
}

export interface AvatarImages {
  /** DEFAULT_AVATAR_SIZE square PNG. */
  small: Buffer;
  /** MEDIUM_AVATAR_SIZE square PNG. */
  medium: Buffer;
  /** The upload as it came, kept as Zulip keeps it (`.original`). */
  original: CheckedImage;
}

/**
 * Zulip's resize_avatar: turned upright, cropped square at the centre, scaled (up too), PNG. Only
 * the first frame of an animation is decoded. `requester` (realm and user) is whose turn it is
 * when images wait for a slot.
 */
export async function resizeAvatar(data: Buffer, requester = ""): Promise<AvatarImages> {
  const square = (size: number) =>
    decoder(data).autoOrient().resize(size, size, { fit: "cover", position: "centre" }).png().toBuffer();
  try {
    return await inImageSlot(requester, async () => {
      const original = await checkImage(data);
      return { medium: await square(MEDIUM_AVATAR_SIZE), small: await square(DEFAULT_AVATAR_SIZE), original };
    });
  } catch (error) {
    throw decodeFailure(error);
  }
}

export interface EmojiImage {
  data: Buffer;
  contentType: "image/png" | "image/gif";
  extension: "png" | "gif";
  original: CheckedImage;
}

/**
 * Frames an animated emoji may have. The input bound (MAX_IMAGE_PIXELS) does not bound the work:
 * every frame is scaled to 64×64 and quantised to a palette, however small it came, so a 184 KB
 * GIF of 8,000 one-pixel frames cost 3.8 s and came out a 2 MB emoji. What an emoji costs is its
 * output, frames × 64 × 64 pixels, bounded here before any frame is decoded. 100 frames (5 s at
 * 20 frames a second) is more than the animated emoji people share have; at GIF_EFFORT the
 * costliest 100 frames (noise, scaled down) measured about 0.7 s of one thread, and come out
 * under 420 KB.
 */
export const MAX_EMOJI_FRAMES = 100;

/**
 * libimagequant's effort for an animation's palettes. sharp's default (7) spent 40–50 ms a frame
 * on a noisy 64×64 frame, and 3 about 6 ms, for files within 1% of the same size.
 */
const GIF_EFFORT = 3;

/**
 * Zulip's resize_emoji: cropped square and scaled to DEFAULT_EMOJI_SIZE. An animation stays one,
 * as a GIF (its frames, delays and loop kept); anything else becomes a PNG. Unlike Zulip, small
 * square GIFs are encoded again too: what is served is always what was decoded here.
 */
export async function resizeEmoji(data: Buffer, requester = ""): Promise<EmojiImage> {
  try {
    return await inImageSlot(requester, async () => {
      const original = await checkImage(data);
      const animated = original.pages > 1;
      if (original.pages > MAX_EMOJI_FRAMES) throw new BadImageError(`Animated emoji can have at most ${MAX_EMOJI_FRAMES} frames.`);
      const resized = decoder(data, { animated }).autoOrient().resize(DEFAULT_EMOJI_SIZE, DEFAULT_EMOJI_SIZE, { fit: "cover", position: "centre" });
      if (animated) return { data: await resized.gif({ effort: GIF_EFFORT }).toBuffer(), contentType: "image/gif", extension: "gif", original };
      return { data: await resized.png().toBuffer(), contentType: "image/png", extension: "png", original };
    });
  } catch (error) {
    throw decodeFailure(error);
  }
}
