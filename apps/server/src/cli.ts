// `npm run cli -- <command>`: operator tasks (cli-commands.ts). On the embedded database the data
// folder has one owner (data-dir-lock.ts): when a server runs on it, the command is carried out by
// that server through its operators' channel; otherwise the CLI takes the folder for the command's
// length, so that a server started meanwhile waits its turn instead of corrupting it.
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigError, loadConfig, type Config } from "@chat/config";
import { JsonableError } from "@chat/core";
import { CommandError, parseCommand, runCli, USAGE, UsageError, type CliInput } from "./cli-commands.ts";
import { acquireDataDirLock, DataDirBusyError, dataDirOwner, type LockOwner } from "./data-dir-lock.ts";
import { ensureDataDir, ownsDataDir } from "./data-dir.ts";
import { ChannelUnavailableError, sendOperatorCommand } from "./operator-channel.ts";
import { readSecret } from "./secret-prompt.ts";
import { BackupError, describeRestore, restoreBackup } from "./backup.ts";
import { clusterDir, clusterSettingsForCli, runningCluster } from "./cluster-state.ts";
import { openServices } from "./services.ts";

/** How long to wait for a server that owns the folder but is still starting (migrations) to listen. */
const STARTING_SERVER_WAIT_MS = 60_000;

type Write = (text: string) => void;

/** What the command needs from the operator's terminal, asked for here rather than by the server. */
async function gatherInput(argv: string[]): Promise<{ argv: string[]; input: CliInput }> {
  const { command, values, positionals } = parseCommand(argv);
  const input: CliInput = {};
  if (command === "set-password") {
    input.password = await readSecret({ prompt: "New password: ", confirm: "Again: ", fromStdin: values["password-stdin"] === true });
  }
  if ((command === "backup" || command === "restore" || command === "import-realm") && positionals.length === 1) {
    // The server that writes it may run in another folder.
    const file = path.resolve(positionals[0]);
    argv = argv.map((arg) => (arg === positionals[0] ? file : arg));
  }
  return { argv, input };
}

async function runThroughServer(owner: LockOwner, config: Config, request: { argv: string[]; input: CliInput }, out: Write): Promise<number> {
  const deadline = Date.now() + STARTING_SERVER_WAIT_MS;
  let told = false;
  for (;;) {
    if (owner.kind === "cli") throw new DataDirBusyError(config.dataDir, owner);
    if (owner.socket !== null) {
      try {
        const result = await sendOperatorCommand(owner.socket, request, out);
        if (result.exit !== 0 && result.error) {
          process.stderr.write(result.usage ? `${result.error}\n\n${USAGE}\n` : `Error: ${result.error}\n`);
        }
        return result.exit;
      } catch (error) {
        if (!(error instanceof ChannelUnavailableError)) throw error;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`the server (pid ${owner.pid}) owns ${config.dataDir} but does not answer on its operators' channel; is it still starting? Try again once it is ready, or stop it.`);
    }
    if (!told) {
      process.stderr.write(`waiting for the server (pid ${owner.pid}) to finish starting...\n`);
      told = true;
    }
    await sleep(250);
    const current = dataDirOwner(config.dataDir);
    if (current === null) return -1;
    owner = current;
  }
}

async function runHere(config: Config, request: { argv: string[]; input: CliInput }, out: Write): Promise<number> {
  const { command, values, positionals } = parseCommand(request.argv);
  if (command === "restore") {
    const result = await restoreBackup(config, positionals[0], { force: values.force === true, log: (line) => out(`${line}\n`) });
    out(describeRestore(result));
    return 0;
  }
  const services = await openServices(config, { migrate: true });
  try {
    await runCli(request.argv, services, { out, input: request.input });
    return 0;
  } finally {
    await services.close();
  }
}

/**
 * The settings of `npm run cluster` on this data folder (cluster-state.ts), for a CLI given no
 * database of its own: those of the running cluster, or with --cluster the last one's. Settings
 * in the environment win.
 */
function withClusterSettings(env: NodeJS.ProcessEnv, forced: boolean): NodeJS.ProcessEnv {
  if (!forced && env.DATABASE_URL) return env;
  const dataDir = path.resolve(env.DATA_DIR || "./data");
  const settings = clusterSettingsForCli(dataDir, { includeStopped: forced });
  if (settings === null) {
    if (forced) throw new CommandError(`--cluster: no \`npm run cluster\` has run on ${dataDir} (DATA_DIR)`);
    // Else the command would quietly open an empty embedded database beside the cluster's files.
    if (clusterSettingsForCli(dataDir, { includeStopped: true }) !== null) {
      process.stderr.write(`note: a stopped \`npm run cluster\` used this data folder; this command uses the embedded database here. Add --cluster for the cluster's database.\n`);
    }
    return env;
  }
  process.stderr.write(`using ${runningCluster(dataDir) ? "the running" : "the last"} cluster's database and Redis (${path.relative(process.cwd(), clusterDir(dataDir)) || "."}/)\n`);
  const merged = { ...env };
  for (const [name, value] of Object.entries(settings)) if (!merged[name]) merged[name] = value;
  return merged;
}

async function main(): Promise<number> {
  let argv = process.argv.slice(2);
  const forceCluster = argv.includes("--cluster");
  argv = argv.filter((arg) => arg !== "--cluster");
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "help") {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const request = await gatherInput(argv);
  const config = loadConfig(withClusterSettings(process.env, forceCluster));
  const out: Write = (text) => process.stdout.write(text);
  if (!ownsDataDir(config)) return runHere(config, request, out);

  ensureDataDir(config.dataDir);
  for (;;) {
    const owner = dataDirOwner(config.dataDir);
    if (owner) {
      const code = await runThroughServer(owner, config, request, out);
      // -1: the server stopped while we waited for it; the folder may be ours now.
      if (code !== -1) return code;
      continue;
    }
    let lock;
    try {
      lock = acquireDataDirLock(config.dataDir, { kind: "cli" });
    } catch (error) {
      // A server took the folder between our look and our try: go through it.
      if (error instanceof DataDirBusyError) continue;
      throw error;
    }
    try {
      return await runHere(config, request, out);
    } finally {
      lock.release();
    }
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      if (error instanceof UsageError) {
        process.stderr.write(`${error.message}\n\n${USAGE}\n`);
        process.exit(2);
      }
      const label = error instanceof ConfigError ? "Configuration error" : "Error";
      const known = error instanceof JsonableError || error instanceof ConfigError || error instanceof DataDirBusyError || error instanceof CommandError || error instanceof BackupError;
      const message = known ? error.message : String(error?.message ?? error);
      process.stderr.write(`${label}: ${message}\n`);
      process.exit(1);
    },
  );
}
