// Zulip's data-original-dimensions (feature levels 276, 278): an uploaded image's size, read from its
// header at upload, rides on the <img> of every preview of it, with its content type (336). No thumbnails here: src stays the upload.
import sharp from "sharp";
import type { ApiClient } from "../support/client.ts";
import { makeJpeg, makePng } from "../support/images.ts";
import { MODES, startTestServer, type TestServer } from "../support/server.ts";
import { createMember } from "../support/users.ts";

describe.each(MODES)("image dimensions (%s)", (mode) => {
  let server: TestServer;
  let alice: ApiClient;

  beforeAll(async () => {
    server = await startTestServer(mode);
    ({ client: alice } = await createMember(server, "dims@example.com", "Dee Dims"));
  });
  afterAll(() => server.stop());

  const upload = async (data: Buffer, name: string): Promise<string> => {
    const res = await alice.raw("post", "/user_uploads").attach("file", data, name);
    expect(res.body.result).toBe("success");
    return res.body.uri;
  };
  const row = (uri: string) => server.running.services.db.prisma.attachment.findUniqueOrThrow({ where: { path_id: uri.slice("/user_uploads/".length) } });
  const sent = async (content: string): Promise<string> => {
    const res = await alice.post("/messages", { type: "stream", to: "general", topic: "dimensions", content });
    expect(res.body.result).toBe("success");
    return (await alice.get(`/messages/${res.body.id}`)).body.message.content;
  };
  const img = (html: string) => /<img[^>]*>/.exec(html)?.[0] ?? null;

  test("a linked PNG's preview carries its size before src; the upload stays the src", async () => {
    const uri = await upload(await makePng(37, 21), "wide.png");
    expect(await row(uri)).toMatchObject({ original_width: 37, original_height: 21 });
    const html = await sent(`[wide.png](${uri})`);
    expect(html).toContain(`<div class="message_inline_image"><a href="${uri}" title="wide.png"><img data-original-dimensions="37x21" data-original-content-type="image/png" src="${uri}" alt="wide.png"></a></div>`);
    // An absolute URL on the realm's host gets it too.
    expect(img(await sent(`[w](${uri})`))).toContain('data-original-dimensions="37x21"');
    expect(img(await sent(`http://${server.running.services.ctx.externalHost}${uri}`))).toContain('data-original-dimensions="37x21"');
  });

  test("an edit that links an image renders its size", async () => {
    const uri = await upload(await makeJpeg(12, 34), "tall.jpg");
    const res = await alice.post("/messages", { type: "stream", to: "general", topic: "dimensions", content: "soon" });
    expect((await alice.patch(`/messages/${res.body.id}`, { content: `here: [tall.jpg](${uri})` })).body.result).toBe("success");
    expect(img((await alice.get(`/messages/${res.body.id}`)).body.message.content)).toBe(`<img data-original-dimensions="12x34" data-original-content-type="image/jpeg" src="${uri}" alt="tall.jpg">`);
  });

  test("the size is as shown: an EXIF-rotated JPEG's sides are swapped; a WebP past the header read is measured", async () => {
    const rotated = await sharp({ create: { width: 40, height: 10, channels: 3, background: "#123456" } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect(await row(await upload(rotated, "rotated.jpg"))).toMatchObject({ original_width: 10, original_height: 40 });
    // Noise compresses badly: a lossy WebP well over 256 KiB, which libwebp reads only whole.
    const side = 1200;
    const raw = Buffer.alloc(side * side * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
    const big = await sharp(raw, { raw: { width: side, height: side - 100, channels: 3 } }).webp({ quality: 100 }).toBuffer();
    expect(big.length).toBeGreaterThan(300 * 1024);
    expect(await row(await upload(big, "big.webp"))).toMatchObject({ original_width: 1200, original_height: 1100 });
    const lossless = await makePng(9, 7).then((png) => sharp(png).webp({ lossless: true }).toBuffer());
    expect(await row(await upload(lossless, "small.webp"))).toMatchObject({ original_width: 9, original_height: 7 });
  });

  test("no size, no attribute: a non-image, bytes that are no image, an image never uploaded", async () => {
    const text = await upload(Buffer.from("just words"), "notes.txt");
    expect(await row(text)).toMatchObject({ original_width: null, original_height: null });
    const fake = await upload(Buffer.from("not really a png"), "fake.png");
    expect(await row(fake)).toMatchObject({ original_width: null, original_height: null });
    const fakeHtml = await sent(`[fake.png](${fake})`);
    expect(img(fakeHtml)).toBe(`<img src="${fake}" alt="fake.png">`);
    const real = await upload(await makePng(5, 6), "real.png");
    const never = real.replace(/[^/]+$/, "never.png");
    const html = await sent(`[a](${never}) and [b](${real.replace(/\/[A-Za-z0-9_-]{24}\//, "/AAAAAAAAAAAAAAAAAAAAAAAA/")})`);
    expect(html.match(/<img/g)).toHaveLength(2);
    expect(html).toContain("<img");
    expect(html).not.toContain("data-original-dimensions");
  });
});
