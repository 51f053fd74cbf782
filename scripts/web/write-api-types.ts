// `npm run web:api-types` (from the repository's root): rewrites apps/web/src/api/schema.d.ts.
import { generateApiTypes, writeApiTypes } from "./api-types.ts";

void generateApiTypes().then(writeApiTypes);
