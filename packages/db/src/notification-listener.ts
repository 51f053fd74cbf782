// A Postgres connection of its own that LISTENs on one channel, and stays listening: after any loss
// (an error, the server's restart, a pg_terminate_backend, a heartbeat that went unanswered) it
// connects again with backoff, for as long as it is open. What it tells its user is exactly what
// a cache kept valid by notifications needs: when every notification committed from then on will
// arrive (`listening`), and when some may have been missed (`lost`, until `listening` again).
import pg from "pg";

export interface NotificationHandlers {
  /** LISTEN is in effect: every notification committed from now on will be delivered. */
  listening(): void;
  /** The connection is gone: notifications may go missing until `listening` is called again. */
  lost(error: unknown): void;
  notified(payload: string): void;
}

export interface NotificationListener {
  /** Stops listening for good; `lost` is called if it was listening. */
  close(): Promise<void>;
}

export interface NotificationListenerOptions {
  connectionString: string;
  channel: string;
  /** Shown in pg_stat_activity, so the connection can be told from the pool's. */
  applicationName: string;
  /** How long connecting may take before it counts as a failure. */
  connectTimeoutMs: number;
}

/** The first reconnect waits this long, each next one twice as long, up to the maximum. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2000;
/**
 * A connection the server stopped answering without closing it (a partition, a dead host) shows
 * no error until TCP gives up, and until then its notifications would silently stop; a query this
 * often that must answer within the timeout notices within seconds.
 */
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_TIMEOUT_MS = 5000;

const CLOSE_TIMEOUT_MS = 1000;

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

function ignore(): void {}

class ChannelListener implements NotificationListener {
  /** The connection in use; null while reconnecting or once closed. */
  private client: pg.Client | null = null;
  private isListening = false;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined = undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly options: NotificationListenerOptions,
    private readonly handlers: NotificationHandlers,
  ) {}

  connect(): void {
    const { options } = this;
    const client = new pg.Client({
      connectionString: options.connectionString,
      application_name: options.applicationName,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
    });
    this.client = client;
    // Errors end the connection ("end" follows); the listener outlives the client, never the process.
    client.on("error", (error) => this.drop(client, error));
    client.on("end", () => this.drop(client, new Error("the connection ended")));
    client.on("notification", (message) => {
      if (this.client === client && message.channel === options.channel) this.handlers.notified(message.payload ?? "");
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${options.channel}`))
      .then(
        () => {
          if (this.client !== client) return;
          this.retryMs = FIRST_RETRY_MS;
          this.isListening = true;
          this.heartbeatTimer = setInterval(() => this.beat(client), HEARTBEAT_MS).unref();
          this.handlers.listening();
        },
        (error: unknown) => this.drop(client, error),
      );
  }

  private beat(client: pg.Client): void {
    const timeout = setTimeout(() => this.drop(client, new Error("the heartbeat went unanswered")), HEARTBEAT_TIMEOUT_MS);
    client.query("SELECT 1").then(
      () => clearTimeout(timeout),
      (error: unknown) => {
        clearTimeout(timeout);
        this.drop(client, error);
      },
    );
  }

  /** Leaves `client` (once; later calls for it do nothing) and connects again after the backoff. */
  private drop(client: pg.Client, error: unknown): void {
    if (this.client !== client) return;
    this.client = null;
    clearInterval(this.heartbeatTimer);
    // Said even if LISTEN never took effect: an attempt failed, and the handler learns of each.
    this.isListening = false;
    this.handlers.lost(error);
    // It may hang on a peer that vanished; its socket's keepalive ends it. Nothing it says counts now.
    client.end().catch(ignore);
    if (this.closed) return;
    this.retryTimer = setTimeout(() => this.connect(), this.retryMs).unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeatTimer);
    const client = this.client;
    if (client === null) return;
    this.client = null;
    if (this.isListening) this.handlers.lost(new Error("the listener was closed"));
    this.isListening = false;
    // A peer that vanished may never answer the goodbye; stopping must not wait for it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([client.end().catch(ignore), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)))]);
    clearTimeout(timer);
  }
}

/** Starts listening on `options.channel` (connecting in the background); `handlers` hear how it goes. */
export function listenForNotifications(options: NotificationListenerOptions, handlers: NotificationHandlers): NotificationListener {
  if (!CHANNEL.test(options.channel)) throw new Error(`not a plain channel name: ${options.channel}`);
  const listener = new ChannelListener(options, handlers);
  listener.connect();
  return listener;
}
