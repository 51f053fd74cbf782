export * from "./params.ts";
export * from "./auth.ts";
export * from "./app.ts";
export * from "./multipart.ts";
export * from "./hot-routes.ts";
export * from "./rate-limit.ts";
export * from "./forwarded.ts";
export * from "./file-upload.ts";
