// The outgoing email settings: Zulip's (Django's) names, their defaults, and a clear error for
// each mistake before the server starts.
import { ConfigError, loadConfig } from "@chat/config";

describe("mail settings", () => {
  test("without EMAIL_HOST: emails are logged, from noreply@ the external host without its port", () => {
    expect(loadConfig({}).mail).toEqual({ host: null, port: 587, user: null, password: null, useTls: true, useSsl: false, noreplyAddress: "noreply@localhost" });
    expect(loadConfig({ EXTERNAL_HOST: "Chat.Example.com:8443" }).mail.noreplyAddress).toBe("noreply@chat.example.com");
    expect(loadConfig({ EXTERNAL_HOST: "[::1]:9991" }).mail.noreplyAddress).toBe("noreply@[::1]");
  });

  test("STARTTLS on 587 by default; EMAIL_USE_SSL is implicit TLS on 465; each port and address as set", () => {
    expect(loadConfig({ EMAIL_HOST: "smtp.example.com", EMAIL_HOST_USER: "u", EMAIL_HOST_PASSWORD: "p" }).mail).toEqual({
      host: "smtp.example.com",
      port: 587,
      user: "u",
      password: "p",
      useTls: true,
      useSsl: false,
      noreplyAddress: "noreply@localhost",
    });
    expect(loadConfig({ EMAIL_HOST: "smtp.example.com", EMAIL_USE_SSL: "true" }).mail).toMatchObject({ port: 465, useTls: false, useSsl: true });
    expect(loadConfig({ EMAIL_HOST: "[::1]", EMAIL_PORT: "25", EMAIL_USE_TLS: "false", NOREPLY_EMAIL_ADDRESS: "robot@example.org" }).mail).toMatchObject({
      host: "::1",
      port: 25,
      useTls: false,
      useSsl: false,
      noreplyAddress: "robot@example.org",
    });
  });

  test.each([
    [{ EMAIL_HOST: "smtp://smtp.example.com" }, /EMAIL_HOST must be a host name or an IP address/],
    [{ EMAIL_HOST: "smtp.example.com:587" }, /EMAIL_HOST must be a host name or an IP address/],
    [{ EMAIL_HOST: "h", EMAIL_PORT: "0" }, /EMAIL_PORT must be between 1 and 65535/],
    [{ EMAIL_HOST: "h", EMAIL_PORT: "smtp" }, /EMAIL_PORT must be a whole number/],
    [{ EMAIL_HOST: "h", EMAIL_USE_TLS: "sometimes" }, /EMAIL_USE_TLS must be true or false/],
    [{ EMAIL_HOST: "h", EMAIL_USE_TLS: "true", EMAIL_USE_SSL: "true" }, /EMAIL_USE_TLS and EMAIL_USE_SSL are both true/],
    [{ EMAIL_HOST: "h", EMAIL_HOST_USER: "u" }, /Set both EMAIL_HOST_USER and EMAIL_HOST_PASSWORD/],
    [{ EMAIL_HOST: "h", EMAIL_HOST_PASSWORD: "p" }, /Set both EMAIL_HOST_USER and EMAIL_HOST_PASSWORD/],
    [{ EMAIL_HOST_USER: "u", EMAIL_HOST_PASSWORD: "p" }, /EMAIL_HOST_USER is set without EMAIL_HOST/],
    [{ EMAIL_PORT: "2525" }, /EMAIL_PORT is set without EMAIL_HOST/],
    [{ NOREPLY_EMAIL_ADDRESS: "Chat <noreply@example.com>" }, /NOREPLY_EMAIL_ADDRESS must be a plain email address/],
    [{ NOREPLY_EMAIL_ADDRESS: "noreply" }, /NOREPLY_EMAIL_ADDRESS must be a plain email address/],
  ])("%j is refused: %s", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
