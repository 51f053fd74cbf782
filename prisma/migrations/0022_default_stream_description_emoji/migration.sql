-- The default stream of organizations created before this had its description's emoji stored
-- unrendered (":octopus:" in the HTML); give those the HTML the markdown renderer makes of it.
UPDATE "stream"
SET "rendered_description" = '<p>Everyone is added to this stream by default. Welcome! <span aria-label="octopus" class="emoji emoji-1f419" role="img" title="octopus">:octopus:</span></p>'
WHERE "description" = 'Everyone is added to this stream by default. Welcome! :octopus:'
  AND "rendered_description" = '<p>Everyone is added to this stream by default. Welcome! :octopus:</p>';
