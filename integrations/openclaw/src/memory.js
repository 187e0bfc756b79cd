// @ts-check
/**
 * gitmem's answers in OpenClaw's shapes: search hits (`MemorySearchResult`), file reads
 * (`MemoryReadResult`), status (`MemoryProviderStatus`), and the search manager OpenClaw's
 * memory runtime hands to Active Memory, `openclaw memory status` and the gateway.
 */

import { GitmemError } from "./gitmem.js";

/** How much snippet text OpenClaw keeps per hit (memory-core's budget is ~2,200 in total). */
export const SNIPPET_LIMIT = 700;

/**
 * @typedef {object} SearchRequest
 * @property {string} query
 * @property {number} [maxResults]
 * @property {number} [minScore]
 * @property {boolean} [lexicalOnly]
 * @property {string} [since]
 * @property {string} [until]
 * @property {string} [asOf]
 * @property {string[]} [entity]
 * @property {string[]} [kind]
 */

/**
 * The arguments of `gitmem recall` for a search.
 * @param {SearchRequest} req
 * @returns {string[]}
 */
export function recallArgs(req) {
  const args = ["recall", req.query];
  if (req.maxResults) args.push("--k", String(req.maxResults));
  if (req.minScore !== undefined && req.minScore !== null) {
    args.push("--min-score", String(req.minScore));
  }
  if (req.lexicalOnly) args.push("--mode", "lexical");
  if (req.since) args.push("--since", req.since);
  if (req.until) args.push("--until", req.until);
  if (req.asOf) args.push("--as-of", req.asOf);
  for (const name of req.entity ?? []) args.push("--entity", name);
  for (const kind of req.kind ?? []) args.push("--kind", kind);
  return args;
}

/**
 * One gitmem result as an OpenClaw memory hit. The citation is gitmem's `source`
 * (`path#Lx-Ly`, with `@commit` for history); a fact a later one replaced says so.
 * @param {any} r a result of `gitmem recall --json`
 */
export function toHit(r) {
  const notes = [];
  if (r.superseded_by) notes.push(`(superseded by ${r.superseded_by})`);
  if (r.uncommitted) notes.push("(uncommitted)");
  // gitmem cut a long content (recall.max_content_chars): memory_get reads the lines whole
  if (r.truncated) notes.push(`(truncated: memory_get ${r.source} reads it whole)`);
  const footer = `${notes.length ? `\n${notes.join(" ")}` : ""}\n\nSource: ${r.source}`;
  const body = String(r.snippet ?? r.content ?? "");
  const room = Math.max(1, SNIPPET_LIMIT - footer.length);
  const snippet = (body.length > room ? `${body.slice(0, room - 1)}…` : body) + footer;
  return {
    path: r.path,
    startLine: r.start_line,
    endLine: r.end_line,
    score: r.score,
    snippet,
    source: /** @type {"memory"} */ ("memory"),
    citation: r.source,
    factId: r.fact_id ?? null,
    kind: r.kind,
    timestamp: r.timestamp ?? null,
    entities: r.entities ?? [],
    commit: r.commit ?? null,
    superseded_by: r.superseded_by ?? null,
    superseded_basis: r.superseded_basis ?? null,
    truncated: Boolean(r.truncated),
    ...recallMetadata(r),
  };
}

/** The curated files, whose entries OpenClaw's trigger recall may inject (as its own index). */
const CURATED = new Set(["MEMORY.md", "memory.md", "USER.md"]);

/**
 * OpenClaw's recall metadata of a gitmem result or trigger entry: `importance` (1-10),
 * `triggers` ("; "-joined, as OpenClaw's own index stores them), and, for an entry of the
 * curated files that has triggers, the provenance OpenClaw's trigger recall asks for (an
 * owner's committed memory).
 * @param {any} r
 */
export function recallMetadata(r) {
  const triggers = Array.isArray(r.triggers) && r.triggers.length ? r.triggers.join("; ") : null;
  return {
    ...(typeof r.importance === "number" ? { importance: r.importance } : {}),
    ...(triggers ? { triggers } : {}),
    ...(triggers && CURATED.has(r.path) ? {
      provenance: { originClass: /** @type {"owner"} */ ("owner"),
        sessionKind: /** @type {"interactive"} */ ("interactive"), observedAt: 0 },
    } : {}),
  };
}

/**
 * A `gitmem triggers --json` entry as a trigger candidate (OpenClaw's `MemorySearchResult`).
 * @param {any} e
 */
export function toTriggerCandidate(e) {
  return {
    path: e.path,
    startLine: e.start_line,
    endLine: e.end_line,
    score: 0,
    snippet: `${e.text}\n\nSource: ${e.source}`,
    source: /** @type {"memory"} */ ("memory"),
    citation: e.source,
    factId: e.fact_id ?? null,
    ...recallMetadata(e),
  };
}

/**
 * The `memory_search` tool's answer: hits, and gitmem's warnings (lexical fallback and why).
 * @param {any} answer `gitmem recall --json`
 * @param {string | null} extraWarning the warm process's start-up warning, if any
 */
export function searchPayload(answer, extraWarning = null) {
  const warnings = [...(answer.warnings ?? [])];
  if (extraWarning && !warnings.includes(extraWarning)) {
    warnings.unshift(extraWarning);
  }
  return {
    results: answer.results.map(toHit),
    provider: "gitmem",
    mode: answer.mode,
    embedding: answer.provider?.name ?? null,
    citations: "gitmem",
    ...(warnings.length ? { warnings } : {}),
    ...(answer.time_window ? { timeWindow: answer.time_window } : {}),
    ...(answer.listing ? { listing: answer.listing } : {}),
  };
}

/**
 * The arguments of `gitmem get` for a read: a path, or a citation `path#Lx-Ly[@commit]`.
 * @param {{path: string, from?: number, lines?: number, at?: string}} req
 */
export function getArgs(req) {
  const args = ["get", req.path];
  if (req.from) args.push("--from", String(req.from));
  if (req.lines) args.push("--lines", String(req.lines));
  if (req.at) args.push("--at", req.at);
  return args;
}

/**
 * `gitmem get --json` as OpenClaw's `MemoryReadResult`.
 * @param {any} got
 */
export function toRead(got) {
  return {
    status: /** @type {"ok"} */ ("ok"),
    path: got.path,
    text: got.text,
    from: got.start_line,
    lines: Math.max(0, got.end_line - got.start_line + 1),
    ...(got.revision ? { revision: got.revision } : {}),
    ...(got.note ? { note: got.note } : {}),
  };
}

/** @param {unknown} error */
export function isNotFound(error) {
  return error instanceof GitmemError && /^no such memory file/.test(error.message);
}

/**
 * `gitmem status --json` as OpenClaw's `MemoryProviderStatus`.
 * @param {any} st
 * @param {string} workspace
 */
export function toStatus(st, workspace) {
  const semantic = st?.semantic ?? {};
  return {
    backend: /** @type {"builtin"} */ ("builtin"),
    provider: "gitmem",
    requestedProvider: semantic.provider ?? undefined,
    model: semantic.active ? semantic.model : undefined,
    files: st?.files,
    chunks: st?.chunks,
    dirty: st ? !st.up_to_date : undefined,
    workspaceDir: workspace,
    dbPath: st?.index,
    sources: /** @type {("memory")[]} */ (["memory"]),
    fts: { enabled: true, available: true },
    vector: { enabled: semantic.provider !== "none", available: Boolean(semantic.active) },
    ...(semantic.active ? {} : {
      fallback: { from: semantic.provider ?? "auto", reason: semantic.hint ?? "lexical" },
    }),
    custom: {
      gitmem: st ?? null,
    },
  };
}

/**
 * OpenClaw's `MemorySearchManager` answered by gitmem.
 * @param {import("./gitmem.js").Gitmem} gm
 * @param {() => Promise<void>} [beforeEach] work done before each call (staged flush entries)
 */
export async function createSearchManager(gm, beforeEach = async () => {}) {
  /** @type {any} */
  let last = null;
  const refresh = async () => {
    last = await gm.json(["status"]);
    return last;
  };
  await refresh().catch((error) => { last = { error: String(error.message ?? error) }; });
  return {
    /** @param {string} query @param {{maxResults?: number, minScore?: number, lexicalOnly?: boolean}} [opts] */
    async search(query, opts = {}) {
      await beforeEach();
      const answer = await gm.json(recallArgs({ query, ...opts }));
      return searchPayload(answer).results;
    },
    /** OpenClaw's trigger recall: the curated entries with trigger phrases. */
    async listTriggerCandidates() {
      await beforeEach();
      const answer = await gm.json(["triggers"]);
      return answer.entries.map(toTriggerCandidate);
    },
    /** @param {{relPath: string, from?: number, lines?: number}} params */
    async readFile({ relPath, from, lines }) {
      try {
        return toRead(await gm.json(getArgs({ path: relPath, from, lines })));
      } catch (error) {
        if (isNotFound(error)) return { status: "not_found", text: "", path: relPath };
        throw error;
      }
    },
    status() {
      return toStatus(last?.error ? null : last, gm.workspace);
    },
    /** @param {{force?: boolean}} [params] */
    async sync(params = {}) {
      await beforeEach();
      await gm.json(params.force ? ["index", "--force"] : ["index"]);
      await refresh();
    },
    async probeEmbeddingAvailability() {
      const st = await refresh();
      return st.semantic?.active
        ? { ok: true, checked: true }
        : { ok: false, checked: true,
            error: st.semantic?.unconfigured ?? st.semantic?.hint ?? "semantic search is off" };
    },
    async probeVectorAvailability() {
      return Boolean((await refresh()).semantic?.active);
    },
    async close() {},
  };
}
