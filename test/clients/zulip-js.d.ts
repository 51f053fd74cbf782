// zulip-js ships no types; this is the part the tests use.
declare module "zulip-js" {
  type Result = Record<string, any>;
  type Call = (params?: Record<string, unknown>) => Promise<Result>;
  interface Client {
    config: { apiKey: string; username: string; realm: string };
    server: { settings: Call };
    users: { retrieve: Call; me: { getProfile: Call } };
    queues: { register: Call; deregister: Call };
    events: { retrieve: Call };
    messages: { send: Call };
    emojis: { retrieve: Call };
  }
  export default function zulipInit(config: { username: string; password?: string; apiKey?: string; realm: string }): Promise<Client>;
}
