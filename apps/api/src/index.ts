export { apiEndpoints, apiHotRoutes, apiRouter, fileEndpoints, fileRoutes } from "./app.ts";
export type { ApiServices } from "./services.ts";
export { tusRoutes } from "./routes/tus.ts";
export { ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from "./routes/server-settings.ts";
