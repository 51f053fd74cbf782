-- An uploaded image's size in pixels, read from its header at upload (Zulip's ImageAttachment
-- original_width_px / original_height_px, feature levels 276 and 278): previews of it carry
-- data-original-dimensions. Null for files that are not images, or whose size is unknown.
ALTER TABLE "attachment" ADD COLUMN "original_width" INTEGER;
ALTER TABLE "attachment" ADD COLUMN "original_height" INTEGER;
