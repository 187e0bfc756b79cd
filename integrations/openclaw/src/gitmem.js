// @ts-check
/**
 * The one door to gitmem: its command line with --json, and its warm process.
 *
 * `run` spawns `gitmem -C WORKSPACE ARGS` with the environment the user configured (so the
 * gitmem OpenClaw starts finds the same configuration as the user's shell: no silent lexical
 * fallback). `fast` answers the read-only commands a warm process serves (`recall`, `get`)
 * through `gitmem serve`, started once by this client (`serve --json` prints the socket and the
 * fields each request carries) and spoken to directly over its Unix socket: a tool call costs
 * milliseconds, not a Python start. Anything wrong with the warm process (not started yet,
 * exited after its idle timeout, another gitmem version) falls back to `run`, whose answer is
 * byte for byte the same.
 */

import { spawn } from "node:child_process";
import { closeSync, openSync, realpathSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/**
 * A failed gitmem command: its own message (without the `gitmem: ` prefix) and exit status.
 * What the caller can act on (bad input, exit 1 and 2; search unavailable, exit 4) is named
 * `ToolInputError`, OpenClaw's name for a tool error whose message reaches the caller (the
 * gateway answers 400 with it instead of a bare "tool execution failed").
 */
export class GitmemError extends Error {
  /** @param {string} message @param {number} code */
  constructor(message, code) {
    super(message);
    this.name = [1, 2, 4].includes(code) ? "ToolInputError" : "GitmemError";
    this.code = code;
    this.status = 400;
  }
}

/**
 * @typedef {object} GitmemOptions
 * @property {string} workspace the memory workspace (a git work tree or a folder in one)
 * @property {string} [command] the gitmem executable (default `gitmem`)
 * @property {Record<string, string>} [env] variables added to the environment gitmem runs in
 * @property {boolean} [warm] start and use `gitmem serve` for recall and get (default true)
 * @property {number} [idleTimeout] seconds an idle warm process lives (default 900)
 * @property {number} [timeoutMs] how long one command may take (default 120000)
 */

/** @typedef {{code: number, out: string, err: string}} Outcome */
/** @typedef {{socket: string, protocol: number, version: string, repo: string, env: string, warning: string | null}} Handshake */

const FAST = new Set(["recall", "get"]);

export class Gitmem {
  /** @param {GitmemOptions} options */
  constructor(options) {
    this.workspace = resolveDir(options.workspace);
    this.command = options.command || "gitmem";
    this.env = { ...process.env, ...(options.env ?? {}) };
    this.warm = options.warm !== false;
    this.idleTimeout = options.idleTimeout ?? 900;
    this.timeoutMs = options.timeoutMs ?? 120000;
    /** @type {Promise<Handshake | null> | null} */
    this.server = null;
    /** @type {string | null} the warning the warm process gave when it started */
    this.serverWarning = null;
  }

  /**
   * `gitmem -C WORKSPACE ARGS` as a process: its exit status and output.
   * @param {string[]} args
   * @returns {Promise<Outcome>}
   */
  spawnCli(args) {
    return new Promise((resolve, reject) => {
      const child = spawn(this.command, ["-C", this.workspace, ...args], {
        env: this.env, stdio: ["ignore", "pipe", "pipe"], timeout: this.timeoutMs,
      });
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8").on("data", (chunk) => { out += chunk; });
      child.stderr.setEncoding("utf8").on("data", (chunk) => { err += chunk; });
      child.on("error", (error) => reject(new GitmemError(
        `cannot run ${this.command}: ${error.message}; install gitmem from its checkout ` +
        "('pipx install .' there; README, Install) or set the plugin's 'command' to its path",
        127)));
      child.on("close", (code, signal) => resolve({
        code: code ?? (signal ? 128 : 1), out, err,
      }));
    });
  }

  /**
   * Run a command and return its JSON; a failure raises GitmemError with gitmem's message.
   * @param {string[]} args the command and its arguments (`--json` is added)
   * @returns {Promise<any>}
   */
  async json(args) {
    const argv = [...args, "--json"];
    const outcome = FAST.has(args[0]) ? await this.fast(argv) : await this.spawnCli(argv);
    return parseOutcome(outcome);
  }

  /**
   * A read-only command through the warm process when one answers, else as a process.
   * @param {string[]} args
   * @returns {Promise<Outcome>}
   */
  async fast(args) {
    const hello = this.warm ? await this.ensureServer() : null;
    if (hello) {
      const reply = await exchange(hello, ["-C", this.workspace, ...args]).catch(() => null);
      if (reply && reply.done) {
        return { code: Number(reply.code ?? 0), out: String(reply.out ?? ""),
                 err: String(reply.err ?? "") };
      }
      this.server = null; // gone or out of date: start a new one next time
    }
    return this.spawnCli(args);
  }

  /**
   * The warm process's handshake, starting `gitmem serve --json` on first use. Null while it
   * cannot serve (another process serves the repository: the command line then reaches that
   * one itself).
   * @returns {Promise<Handshake | null>}
   */
  ensureServer() {
    if (!this.server) {
      this.server = this.startServer().catch(() => null);
    }
    return this.server;
  }

  /** @returns {Promise<Handshake | null>} */
  startServer() {
    return new Promise((resolve) => {
      // Its log (warnings, a refusal to start) goes to a file: it outlives our pipes.
      const log = openSync(serverLog(), "a");
      const child = spawn(this.command, ["-C", this.workspace, "serve", "--json",
        "--idle-timeout", String(this.idleTimeout)], {
        env: this.env, stdio: ["ignore", "pipe", log], detached: true,
      });
      closeSync(log);
      const stdout = /** @type {import("node:stream").Readable} */ (child.stdout);
      let out = "";
      const done = (/** @type {Handshake | null} */ value) => {
        stdout.removeAllListeners("data");
        stdout.destroy(); // serve prints nothing else on stdout
        child.unref(); // it lives on its idle timeout, not as long as this process
        resolve(value);
      };
      child.on("error", () => resolve(null));
      stdout.setEncoding("utf8").on("data", (chunk) => {
        out += chunk;
        const end = out.indexOf("\n");
        if (end < 0) return;
        try {
          const hello = JSON.parse(out.slice(0, end));
          this.serverWarning = hello.warning ?? null;
          done(hello);
        } catch {
          done(null);
        }
      });
      child.on("exit", () => resolve(null)); // exited before listening (another serves)
    });
  }

  /** Stop the warm process this client started (if it still runs). */
  async close() {
    const hello = this.server ? await this.server : null;
    this.server = null;
    if (hello) {
      await exchange(hello, [], "stop").catch(() => null);
    }
  }
}

/**
 * One request to the warm process, skipping heartbeats (the protocol of gitmem/front/warm/client.py).
 * @param {Handshake} hello @param {string[]} argv @param {string} [op]
 * @returns {Promise<any>}
 */
export function exchange(hello, argv, op = "run") {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(hello.socket);
    let buf = "";
    const fail = (/** @type {Error} */ error) => { sock.destroy(); reject(error); };
    sock.setTimeout(5000, () => fail(new Error("the warm process stopped answering")));
    sock.setEncoding("utf8");
    sock.on("error", fail);
    sock.on("connect", () => {
      sock.write(JSON.stringify({ protocol: hello.protocol, version: hello.version,
        repo: hello.repo, env: hello.env, op, argv, color: false }) + "\n");
    });
    sock.on("data", (chunk) => {
      buf += chunk;
      let end;
      while ((end = buf.indexOf("\n")) >= 0) {
        const reply = JSON.parse(buf.slice(0, end));
        buf = buf.slice(end + 1);
        if (!reply.working) {
          sock.end();
          resolve(reply);
          return;
        }
      }
    });
    sock.on("end", () => reject(new Error("the warm process went away")));
  });
}

/**
 * A command's JSON, or its error.
 * @param {Outcome} outcome
 * @returns {any}
 */
export function parseOutcome({ code, out, err }) {
  if (code !== 0) {
    throw new GitmemError(errorMessage(err, code), code);
  }
  try {
    return JSON.parse(out);
  } catch {
    throw new GitmemError(`gitmem printed no JSON: ${out.slice(0, 200)}`, 3);
  }
}

/** @param {string} err @param {number} code */
export function errorMessage(err, code) {
  const text = err.trim().replace(/^gitmem: /, "");
  return text || `gitmem exited with status ${code}`;
}

/** Where the warm processes this plugin starts write their log. */
export function serverLog() {
  return path.join(os.tmpdir(), `gitmem-openclaw-serve-${process.getuid?.() ?? "user"}.log`);
}

/** @param {string} dir */
function resolveDir(dir) {
  try {
    return realpathSync(dir);
  } catch {
    return dir; // gitmem names the missing folder itself
  }
}
