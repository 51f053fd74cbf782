/** Server-wide facts actions need besides the database (never per-request state). */
export interface ServerContext {
  /** The host clients use; stream email addresses and realm URIs are built on it. */
  externalHost: string;
  devMode: boolean;
}
