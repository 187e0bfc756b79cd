// @ts-check
/**
 * `openclaw memory …` answered by gitmem: each subcommand runs the gitmem command of the same
 * name on the agent's workspace with the arguments as given (`openclaw memory reflect --since
 * 7d` is `gitmem reflect --since 7d`; `--help` shows gitmem's help), printing gitmem's own
 * output and exiting with its status. `search` also takes OpenClaw's `--max-results` and
 * `--query`; `--agent ID` picks the agent whose workspace is used.
 */

import { spawn } from "node:child_process";

import { drainStaged } from "./writing.js";

/** [subcommand, gitmem command, description] */
const COMMANDS = [
  ["search", "recall", "Search memory (gitmem recall: --k 25 --since 30d --entity --kind --json)"],
  ["recall", "recall", "Same as search"],
  ["get", "get", "Print memory text by line: PATH[#Lx[-Ly]][@REV] (gitmem get)"],
  ["status", "status", "Index, semantic search state and warnings (gitmem status)"],
  ["index", "index", "Bring the index up to date; --force rebuilds it (gitmem index)"],
  ["reflect", "reflect", "Update opinions, entity pages, MEMORY.md proposals (gitmem reflect)"],
  ["review", "review", "How memory changed between revisions: RANGE (gitmem review)"],
  ["entity", "entity", "Tell me about an entity, or list them (gitmem entity)"],
  ["opinions", "opinions", "Opinions with confidence and evidence (gitmem opinions)"],
  ["retain", "retain", "Append one Retain entry to today's note and commit it (gitmem retain)"],
];

/**
 * Split off the options this plugin consumes; translate OpenClaw's search option names.
 * @param {string[]} args @param {string} command
 * @returns {{agent: string | undefined, rest: string[]}}
 */
export function translateArgs(args, command) {
  /** @type {string | undefined} */
  let agent;
  const rest = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => (inline !== undefined ? inline : args[++i]);
    if (flag === "--agent") {
      agent = value();
    } else if (command === "recall" && flag === "--max-results") {
      rest.push("--k", value());
    } else if (command === "recall" && flag === "--query") {
      rest.unshift(value());
    } else {
      rest.push(arg);
    }
  }
  return { agent, rest };
}

/**
 * @param {any} program commander's `openclaw` program
 * @param {{backends: ReturnType<typeof import("../index.js").createBackends>, config: any}} deps
 */
export function registerMemoryCli(program, { backends, config }) {
  const memory = program.command("memory")
    .description("Search and maintain memory with gitmem (Markdown in git)");
  for (const [name, command, description] of COMMANDS) {
    memory.command(name)
      .description(description)
      .helpOption(false)
      .allowUnknownOption(true)
      .allowExcessArguments(true)
      .action(async (/** @type {any[]} */ ...params) => {
        const cmd = params[params.length - 1];
        const { agent, rest } = translateArgs(cmd.args, command);
        const { gm } = backends.forAgent(config, agent);
        if (command !== "get" && command !== "status") await drainStaged(gm);
        process.exitCode = await runInherited(gm, [command, ...rest]);
      });
  }
}

/**
 * gitmem with this terminal: its output as it prints it, its exit status.
 * @param {import("./gitmem.js").Gitmem} gm @param {string[]} args
 * @returns {Promise<number>}
 */
function runInherited(gm, args) {
  return new Promise((resolve) => {
    const child = spawn(gm.command, ["-C", gm.workspace, ...args], {
      env: gm.env, stdio: "inherit",
    });
    child.on("error", (error) => {
      process.stderr.write(`gitmem: cannot run ${gm.command}: ${error.message}\n`);
      resolve(127);
    });
    child.on("close", (code) => resolve(code ?? 1));
  });
}
