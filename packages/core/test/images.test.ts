import { Readable } from "node:stream";
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { FileTooLargeError } from "@chat/storage";
import { BadImageError, imageTooLargeError, MAX_EMOJI_FRAMES, MAX_IMAGE_PIXELS, readBoundedBuffer, resizeAvatar, resizeEmoji } from "../src/lib/images.ts";

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: "#3366cc" } });

async function animatedGif(frames: number, width: number, height: number): Promise<Buffer> {
  const colours = ["#ff0000", "#00ff00", "#0000ff", "#ffff00"];
  const pngs = await Promise.all(
    Array.from({ length: frames }, (_, i) => sharp({ create: { width, height, channels: 4, background: colours[i % colours.length] } }).png().toBuffer()),
  );
  return sharp(pngs, { join: { animated: true } }).gif({ delay: Array(frames).fill(120), loop: 0 }).toBuffer();
}

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A PNG whose header claims width × height: a few bytes that would decode to gigabytes. */
function pngClaiming(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.alloc(1024))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A GIF of `frames` frames on a side × side canvas, each frame one pixel: tiny, and side² × frames pixels decoded. */
function gifClaiming(side: number, frames: number): Buffer {
  const screen = Buffer.alloc(13);
  screen.write("GIF89a", 0, "latin1");
  screen.writeUInt16LE(side, 6);
  screen.writeUInt16LE(side, 8);
  screen[10] = 0x80; // a global colour table of two colours
  const colours = Buffer.from([0, 0, 0, 255, 255, 255]);
  const loop = Buffer.from([0x21, 0xff, 0x0b, ...Buffer.from("NETSCAPE2.0", "latin1"), 0x03, 0x01, 0x00, 0x00, 0x00]);
  const frame = Buffer.from([
    ...[0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00], // 100 ms
    ...[0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0], // a 1×1 image at the corner
    ...[0x02, 0x02, 0x44, 0x01, 0x00], // its pixel, LZW-coded
  ]);
  return Buffer.concat([screen, colours, loop, ...Array<Buffer>(frames).fill(frame), Buffer.from([0x3b])]);
}

describe("images", () => {
  test("an avatar: 100 and 500 pixel square PNGs, the original kept with the type its bytes have", async () => {
    const jpeg = await solid(300, 200).jpeg().toBuffer();
    const avatar = await resizeAvatar(jpeg);
    expect(await sharp(avatar.small).metadata()).toMatchObject({ format: "png", width: 100, height: 100 });
    expect(await sharp(avatar.medium).metadata()).toMatchObject({ format: "png", width: 500, height: 500 });
    expect(avatar.original).toMatchObject({ contentType: "image/jpeg", format: "jpeg", pages: 1 });
    expect(avatar.original.data.equals(jpeg)).toBe(true);
  });

  test("an animated avatar becomes its first frame", async () => {
    const avatar = await resizeAvatar(await animatedGif(3, 40, 40));
    expect(await sharp(avatar.small, { animated: true }).metadata()).toMatchObject({ format: "png", width: 100, height: 100 });
  });

  test("an emoji: cropped square to 64 pixels, a PNG", async () => {
    const emoji = await resizeEmoji(await solid(200, 120).webp().toBuffer());
    expect(emoji).toMatchObject({ contentType: "image/png", extension: "png" });
    expect(await sharp(emoji.data).metadata()).toMatchObject({ format: "png", width: 64, height: 64 });
    expect(emoji.original.contentType).toBe("image/webp");
  });

  test("an animated GIF emoji stays animated, its frames and delays kept", async () => {
    const emoji = await resizeEmoji(await animatedGif(3, 150, 100));
    expect(emoji).toMatchObject({ contentType: "image/gif", extension: "gif" });
    const metadata = await sharp(emoji.data, { animated: true }).metadata();
    expect(metadata).toMatchObject({ format: "gif", width: 64, pageHeight: 64, pages: 3, delay: [120, 120, 120] });
  });

  test("a GIF of one frame becomes a PNG", async () => {
    const emoji = await resizeEmoji(await solid(64, 64).gif().toBuffer());
    expect(emoji.extension).toBe("png");
  });

  test.each([
    ["text", Buffer.from("this is not an image")],
    ["an empty file", Buffer.alloc(0)],
    ["SVG (decodable, refused)", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')],
  ])("%s is refused in Zulip's words", async (_name, data) => {
    for (const resize of [resizeAvatar, resizeEmoji]) {
      const refusal = resize(data);
      await expect(refusal).rejects.toBeInstanceOf(BadImageError);
      await expect(refusal).rejects.toMatchObject({ message: "Could not decode image; did you upload an image file?", code: "BAD_IMAGE", status: 400 });
    }
  });

  test("a truncated image is refused", async () => {
    const png = await solid(300, 300).png().toBuffer();
    await expect(resizeAvatar(png.subarray(0, Math.floor(png.length / 2)))).rejects.toMatchObject({ message: "Could not decode image; did you upload an image file?" });
  });

  test("a decompression bomb is refused from its header, before any pixel is decoded", async () => {
    const bomb = pngClaiming(60_000, 60_000);
    expect(bomb.length).toBeLessThan(2000);
    await expect(resizeAvatar(bomb)).rejects.toMatchObject({ message: "Image size exceeds limit.", code: "BAD_IMAGE" });
    await expect(resizeEmoji(bomb)).rejects.toMatchObject({ message: "Image size exceeds limit." });
    // Every frame counts: a 1000×1000 canvas is within the bound, thirty of them are not.
    const frames = Math.floor(MAX_IMAGE_PIXELS / 1_000_000) + 5;
    const gif = gifClaiming(1000, frames);
    expect(gif.length).toBeLessThan(2000);
    await expect(resizeEmoji(gif)).rejects.toMatchObject({ message: "Image size exceeds limit." });
    await expect(resizeEmoji(gifClaiming(1000, 2))).resolves.toMatchObject({ extension: "gif" });
  });

  test("an emoji's frames are bounded before any is decoded: what it costs is its output, however small each frame came", async () => {
    // 8,000 one-pixel frames: 184 KB, within the pixel bound, 3.8 s of scaling each to 64×64.
    const bomb = gifClaiming(1, 8000);
    expect(bomb.length).toBeLessThan(200_000);
    const refusal = resizeEmoji(bomb);
    await expect(refusal).rejects.toBeInstanceOf(BadImageError);
    await expect(refusal).rejects.toMatchObject({ message: `Animated emoji can have at most ${MAX_EMOJI_FRAMES} frames.`, code: "BAD_IMAGE", status: 400 });
    await expect(resizeEmoji(gifClaiming(1, MAX_EMOJI_FRAMES + 1))).rejects.toMatchObject({ code: "BAD_IMAGE" });
    // Frames that differ from the one before (identical ones the encoder merges).
    const atTheBound = await resizeEmoji(await animatedGif(MAX_EMOJI_FRAMES, 2, 2));
    expect(await sharp(atTheBound.data, { animated: true }).metadata()).toMatchObject({ format: "gif", width: 64, pageHeight: 64, pages: MAX_EMOJI_FRAMES });
    // An avatar decodes only the first frame, so many frames cost it nothing.
    expect((await resizeAvatar(bomb)).original.pages).toBe(8000);
  });

  test("images wait their turn by requester: one member's burst does not hold back another's one image", async () => {
    const slow = await solid(3000, 3000).png().toBuffer();
    const quick = await solid(40, 40).png().toBuffer();
    const finished: string[] = [];
    const track = (name: string, work: Promise<unknown>) => work.then(() => finished.push(name));
    const burst = Array.from({ length: 6 }, (_, i) => track(`a${i}`, resizeAvatar(slow, "1:10")));
    const other = track("b", resizeEmoji(quick, "1:11"));
    await Promise.all([...burst, other]);
    // Two run at once: b waits for at most one more of a's (first in, first out made it the last).
    expect(finished.indexOf("b")).toBeLessThanOrEqual(3);
  });

  test("many at once wait their turn and all finish, refusals included", async () => {
    const png = await solid(120, 80).png().toBuffer();
    const results = await Promise.allSettled([
      ...Array.from({ length: 6 }, () => resizeEmoji(png)),
      resizeAvatar(Buffer.from("nope")),
      ...Array.from({ length: 3 }, () => resizeAvatar(png)),
    ]);
    expect(results.map((r) => r.status)).toEqual([...Array(6).fill("fulfilled"), "rejected", ...Array(3).fill("fulfilled")]);
  });

  test("readBoundedBuffer reads up to the bound and refuses past it", async () => {
    expect((await readBoundedBuffer(Readable.from([Buffer.alloc(600), Buffer.alloc(400)]), 1000)).length).toBe(1000);
    await expect(readBoundedBuffer(Readable.from([Buffer.alloc(600), Buffer.alloc(401)]), 1000)).rejects.toBeInstanceOf(FileTooLargeError);
  });

  test("the size refusal names the limit in MiB", () => {
    expect(imageTooLargeError(5 * 1024 * 1024).message).toBe("Uploaded file is larger than the allowed limit of 5 MiB");
  });
});
