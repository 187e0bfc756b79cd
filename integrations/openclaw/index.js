// @ts-check
/**
 * openclaw-gitmem: gitmem as OpenClaw's memory (a plugin of kind "memory").
 *
 * Holding `plugins.slots.memory`, it answers OpenClaw's own `memory_search` and `memory_get`
 * tools and the `openclaw memory` command line from gitmem, gives the memory runtime (Active
 * Memory, status, the gateway) a search manager backed by gitmem, teaches the agent gitmem's
 * Retain entries in the system prompt, and turns the pre-compaction memory flush into commits
 * made by `gitmem retain`. gitmem runs as a child process (`--json`), warm through
 * `gitmem serve` for the tools.
 */

import { registerMemoryCli } from "./src/cli.js";
import { Gitmem } from "./src/gitmem.js";
import {
  createSearchManager, getArgs, isNotFound, recallArgs, searchPayload, toRead,
} from "./src/memory.js";
import { buildFlushPlan, buildPromptSection, drainStaged, retainArgs } from "./src/writing.js";

const ID = "gitmem";

/**
 * @typedef {object} PluginConfig
 * @property {string} [command] the gitmem executable (default `gitmem` on PATH)
 * @property {string} [workspace] the memory workspace (default: the agent's workspace)
 * @property {Record<string, string>} [env] environment for gitmem (e.g. XDG_CONFIG_HOME)
 * @property {boolean} [warm] answer tools through `gitmem serve` (default true)
 * @property {number} [idleTimeout] seconds an idle `gitmem serve` lives (default 900)
 * @property {number} [timeoutMs] how long one gitmem command may take (default 120000)
 */

/** @param {any} cfg @returns {string} */
export function defaultAgentId(cfg) {
  const list = Array.isArray(cfg?.agents?.list) ? cfg.agents.list : [];
  return list.find((/** @type {any} */ a) => a?.default)?.id ?? list[0]?.id ?? "main";
}

/**
 * One gitmem client per workspace, shared by the tools, the runtime and the CLI of a process.
 * @param {any} api the plugin API
 */
export function createBackends(api) {
  /** @type {PluginConfig} */
  const conf = api.pluginConfig ?? {};
  /** @type {Map<string, {gm: Gitmem, unconfigured: Promise<string | null>}>} */
  const byWorkspace = new Map();

  /** @param {any} cfg @param {string | undefined} agentId @param {string} [fallbackDir] */
  const workspaceOf = (cfg, agentId, fallbackDir) => {
    if (conf.workspace) return api.resolvePath ? api.resolvePath(conf.workspace) : conf.workspace;
    const id = agentId || defaultAgentId(cfg);
    return api.runtime?.agent?.resolveAgentWorkspaceDir?.(cfg ?? api.config, id) ?? fallbackDir;
  };

  /** @param {string} workspace */
  const forWorkspace = (workspace) => {
    let backend = byWorkspace.get(workspace);
    if (!backend) {
      const gm = new Gitmem({ workspace, command: conf.command, env: conf.env, warm: conf.warm,
        idleTimeout: conf.idleTimeout, timeoutMs: conf.timeoutMs });
      // Said with every answer when no gitmem configuration reaches the process.
      const unconfigured = gm.json(["status"]).then(
        (st) => st?.semantic?.unconfigured ?? null, () => null);
      backend = { gm, unconfigured };
      byWorkspace.set(workspace, backend);
    }
    return backend;
  };

  return {
    conf,
    workspaceOf,
    forWorkspace,
    /** @param {any} cfg @param {string | undefined} agentId @param {string} [dir] */
    forAgent: (cfg, agentId, dir) => {
      const ws = workspaceOf(cfg, agentId, dir);
      if (!ws) throw new Error("gitmem: no workspace: set agents.defaults.workspace or the " +
        "plugin's 'workspace'");
      return forWorkspace(ws);
    },
    async closeAll() {
      await Promise.all([...byWorkspace.values()].map((b) => b.gm.close()));
      byWorkspace.clear();
    },
  };
}

/** @param {any} payload */
function jsonResult(payload) {
  return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }],
    details: payload };
}

/** @param {any} value @returns {string[] | undefined} */
function listOf(value) {
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

const SEARCH_PARAMETERS = {
  type: "object",
  properties: {
    query: { type: "string", description: "What to find: words, ids, phrases; a date phrase " +
      "('last week') becomes a time window" },
    maxResults: { type: "integer", minimum: 1, maximum: 1000, description: "How many results " +
      "(default 8)" },
    minScore: { type: "number", description: "Leave out results scoring below this" },
    since: { type: "string", description: "Event time on or after: 30d, 2w, 2025-11, today" },
    until: { type: "string", description: "Event time on or before" },
    asOf: { type: "string", description: "Answer from the memory as it stood then (a date " +
      "or a commit)" },
    entity: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
      description: "Only results about this entity (or these)" },
    kind: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
      description: "W (world), B (experience), O (opinion), S (observation), note" },
  },
  required: ["query"],
  additionalProperties: false,
};

const GET_PARAMETERS = {
  type: "object",
  properties: {
    path: { type: "string", description: "A memory file (MEMORY.md, memory/2025-11-27.md) " +
      "or a citation path#L12-L20[@commit]" },
    from: { type: "integer", minimum: 1, description: "First line (1-based)" },
    lines: { type: "integer", minimum: 1, description: "How many lines" },
    at: { type: "string", description: "Read the file as of a revision (commit, branch, tag)" },
  },
  required: ["path"],
  additionalProperties: false,
};

const RETAIN_PARAMETERS = {
  type: "object",
  properties: {
    entry: { type: "string", description: "One Retain entry: '<KIND>[(c=0.9)] [@Entity ...]: " +
      "<text>', KIND W|B|O|S" },
    replaces: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }],
      description: "Facts this entry replaces (a knowledge update you know of): fact ids " +
        "(f-3fa9c2e11aa0) or citations (memory/2025-11-10.md#L14), as memory_search and " +
        "memory_retain's may_replace show them. Given for an entry retained already today, it " +
        "is added under that entry" },
  },
  required: ["entry"],
  additionalProperties: false,
};

/**
 * The agent tools, answered by gitmem for the agent's workspace.
 * @param {ReturnType<typeof createBackends>} backends
 * @param {any} ctx the tool context (config, agentId, workspaceDir)
 */
export function createTools(backends, ctx) {
  const cfg = ctx?.getRuntimeConfig?.() ?? ctx?.runtimeConfig ?? ctx?.config;
  const backend = () => backends.forAgent(cfg, ctx?.agentId, ctx?.workspaceDir);
  const ready = async () => {
    const b = backend();
    await drainStaged(b.gm); // entries a memory flush staged land in git before we answer
    return b;
  };
  return [
    {
      name: "memory_search",
      label: "Memory Search",
      catalogMode: "direct-only", // model-visible, not deferred behind tool_search
      description: "Mandatory recall step: search long-term memory (MEMORY.md, daily notes " +
        "memory/YYYY-MM-DD.md, bank/ pages, kept in git by gitmem) before answering questions " +
        "about prior work, decisions, dates, people, preferences or todos. Each hit cites " +
        "path#Lx-Ly (@commit for history); 'superseded_by' names the fact that replaced it.",
      parameters: SEARCH_PARAMETERS,
      /** @param {string} _id @param {any} params */
      async execute(_id, params) {
        const b = await ready();
        const answer = await b.gm.json(recallArgs({
          query: String(params.query), maxResults: params.maxResults, minScore: params.minScore,
          since: params.since, until: params.until, asOf: params.asOf,
          entity: listOf(params.entity), kind: listOf(params.kind),
        }));
        return jsonResult(searchPayload(answer, await b.unconfigured));
      },
    },
    {
      name: "memory_get",
      label: "Memory Get",
      catalogMode: "direct-only",
      description: "Read memory text by line: a memory file, or a memory_search citation " +
        "(path#L12-L20, path#L12@commit for history). Other files are refused. status=ok " +
        "with the text, or status=not_found.",
      parameters: GET_PARAMETERS,
      /** @param {string} _id @param {any} params */
      async execute(_id, params) {
        const b = backend();
        try {
          return jsonResult(toRead(await b.gm.json(getArgs(params))));
        } catch (error) {
          if (isNotFound(error)) {
            return jsonResult({ status: "not_found", text: "", path: params.path });
          }
          throw error;
        }
      },
    },
    {
      name: "memory_retain",
      label: "Memory Retain",
      catalogMode: "direct-only",
      description: "Write one durable fact to memory: appends the Retain entry ('W @Entity: " +
        "fact', 'B: what you did', 'O(c=0.8) @Entity: opinion', 'S: observation') to today's " +
        "memory/YYYY-MM-DD.md and commits it to git; the next memory_search finds it. A " +
        "malformed entry is refused with the grammar. Answers with fact_id, source and " +
        "may_replace (earlier facts about the same subjects): confirm one with a second call " +
        "that passes it as replaces.",
      parameters: RETAIN_PARAMETERS,
      /** @param {string} _id @param {any} params */
      async execute(_id, params) {
        const b = backend();
        return jsonResult(await b.gm.json(retainArgs(String(params.entry),
          listOf(params.replaces))));
      },
    },
  ];
}

/**
 * OpenClaw's memory runtime backed by gitmem.
 * @param {ReturnType<typeof createBackends>} backends
 */
export function createRuntime(backends) {
  return {
    /** @param {{cfg: any, agentId: string}} params */
    async getMemorySearchManager({ cfg, agentId }) {
      try {
        const b = backends.forAgent(cfg, agentId);
        return { manager: await createSearchManager(b.gm, () => drainStaged(b.gm).then(() => {})) };
      } catch (error) {
        return { manager: null, error: error instanceof Error ? error.message : String(error) };
      }
    },
    resolveMemoryBackendConfig() {
      return { backend: /** @type {"builtin"} */ ("builtin") };
    },
    async closeAllMemorySearchManagers() {
      await backends.closeAll();
    },
  };
}

export default {
  id: ID,
  name: "gitmem",
  description: "Memory kept as Markdown in git: recall with path#Lline citations, Retain " +
    "entries committed by gitmem",
  kind: "memory",
  /** @param {any} api */
  register(api) {
    const backends = createBackends(api);
    api.registerMemoryCapability({
      promptBuilder: buildPromptSection,
      flushPlanResolver: buildFlushPlan,
      runtime: createRuntime(backends),
    });
    api.registerTool((/** @type {any} */ ctx) => createTools(backends, ctx),
      { names: ["memory_search", "memory_get", "memory_retain"] });
    api.on?.("after_compaction", async (/** @type {any} */ _event, /** @type {any} */ ctx) => {
      const b = backends.forAgent(api.config, ctx?.agentId, ctx?.workspaceDir);
      const { refused } = await drainStaged(b.gm);
      for (const r of refused) api.logger?.warn?.(`gitmem: refused '${r.entry}': ${r.error}`);
    });
    api.on?.("gateway_stop", () => backends.closeAll()); // the warm processes it started
    api.registerCli((/** @type {any} */ cli) => registerMemoryCli(cli.program, {
      backends, config: cli.config ?? api.config,
    }), { descriptors: [{ name: "memory", description: "Search and maintain memory with gitmem",
      hasSubcommands: true }] });
  },
};
