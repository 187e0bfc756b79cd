// @ts-check
/**
 * How memory gets written: the system prompt section that teaches the agent gitmem's Retain
 * entries, and the pre-compaction memory flush. OpenClaw's flush turn may only read and
 * append to one file (`relativePath`); here that file is a staging file under `.memory/`
 * (git never sees it), and `drainStaged` hands each staged entry to `gitmem retain`, which
 * appends it to today's daily note and commits it: flushed memory lands in git.
 */

import { readdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

export const STAGING_DIR = ".memory/flush";
const ENTRY = /^[-*]\s+((?:W|B|S|O(?:\(c=[0-9.]+\))?)(?:\s+@\S+)*\s*:\s*\S.*)$/;
const REPLACES = /^\s+[-*]\s+replaces\s*:\s*(.+?)\s*$/i;
const NO_REPLY = "NO_REPLY";

const GRAMMAR = [
  "- W @Entity: a fact about the world (W world, B what you did, S an observation)",
  "- B: Deployed the gateway to The Castle.",
  "- O(c=0.8) @Peter: Prefers short replies. (an opinion with its confidence, 0 to 1)",
];
const REPLACES_RULE = "When a fact changes (a knowledge update you know of), say which fact " +
  "the new one replaces: its fact id (f-3fa9c2e11aa0) or citation (memory/2025-11-10.md#L14) " +
  "from memory_search";

/**
 * The `## Memory` section of the system prompt (OpenClaw's `promptBuilder`).
 * @param {{availableTools: Set<string>, citationsMode?: string}} params
 * @returns {string[]}
 */
export function buildPromptSection({ availableTools, citationsMode }) {
  const search = availableTools.has("memory_search");
  const get = availableTools.has("memory_get");
  const retain = availableTools.has("memory_retain");
  if (!search && !get && !retain) return [];
  const lines = ["## Memory (gitmem: Markdown in git)"];
  if (search) {
    lines.push("Before answering anything about prior work, decisions, dates, people, " +
      "preferences or todos: run memory_search" +
      (get ? "; then memory_get with a hit's citation (path#Lx-Ly) for only the lines you need"
        : "") + ". If you are unsure after searching, say you checked.");
    lines.push("memory_search takes since/until (30d, 2w, 2025-11, today), entity and kind " +
      "(W, B, O, S, note); a date phrase in the query ('last week') becomes a time window. " +
      "A hit marked 'superseded by' was replaced by a later fact: prefer the newer one. If " +
      "the answer has warnings (such as results being lexical), tell the user.");
  }
  if (citationsMode === "off") {
    lines.push("Citations are off: do not mention file paths or line numbers unless asked.");
  } else {
    lines.push("Cite memory as Source: <path#Lx-Ly> (a citation with @commit is history).");
  }
  lines.push("Durable facts are Retain entries: one list item each, self-contained, with the " +
    "entities it is about as @Name (one word: @The-Castle):", ...GRAMMAR);
  if (retain) {
    lines.push("Record a durable fact with memory_retain (one entry per call): it appends the " +
      "entry to today's memory/YYYY-MM-DD.md and commits it. Do not edit memory files for " +
      "this. Keep the entities and kind of the fact it updates.");
    lines.push(`${REPLACES_RULE}: pass it as memory_retain's replaces. memory_retain answers ` +
      "with may_replace (earlier facts about the same subjects): if one of them is the fact " +
      "you changed, confirm it with a second memory_retain of the same entry with that " +
      "replaces. Without a declared replacement gitmem's rule decides, and it prefers a " +
      "missed update to a wrong one.");
  }
  lines.push("");
  return lines;
}

/**
 * The pre-compaction memory flush (OpenClaw's `flushPlanResolver`): the agent appends Retain
 * entries to today's staging file; `drainStaged` commits them through `gitmem retain`.
 * @param {{cfg?: any, nowMs?: number, contextWindowTokens?: number}} [params]
 */
export function buildFlushPlan(params = {}) {
  const defaults = params.cfg?.agents?.defaults?.compaction?.memoryFlush;
  if (defaults?.enabled === false) return null;
  const day = new Date(params.nowMs ?? Date.now()).toISOString().slice(0, 10);
  const relativePath = `${STAGING_DIR}/${day}.md`;
  let soft = numberOr(defaults?.softThresholdTokens, 4000);
  const reserve = 20000;
  const window = numberOr(params.contextWindowTokens, 0);
  if (window > 0) soft = Math.max(0, Math.min(soft, Math.floor((window - reserve) / 2)));
  const rules = [
    `Append the durable facts of this session to ${relativePath}, one Retain entry per line:`,
    ...GRAMMAR,
    `${REPLACES_RULE}, in a nested item under the entry: "  - replaces: f-3fa9c2e11aa0".`,
    "Only facts worth keeping beyond this session; each self-contained. Append only: never " +
      "rewrite the file, and do not write any other file (MEMORY.md, SOUL.md, AGENTS.md " +
      "and the daily notes are read-only here).",
    "gitmem then records each entry in memory/" + day + ".md with 'gitmem retain' and " +
      "commits it to git.",
    `If nothing is worth keeping, reply with ${NO_REPLY}.`,
  ];
  return {
    softThresholdTokens: soft,
    forceFlushTranscriptBytes: 2 * 1024 * 1024,
    reserveTokensFloor: reserve,
    model: defaults?.model?.trim() || undefined,
    prompt: ["Pre-compaction memory flush.", ...rules,
      `Current time: ${new Date(params.nowMs ?? Date.now()).toISOString()}`].join("\n"),
    systemPrompt: ["Pre-compaction memory flush turn: the session is near compaction; capture " +
      "durable memories now.", ...rules].join("\n"),
    relativePath,
  };
}

/** @typedef {{entry: string, replaces: string[]}} StagedEntry */

/**
 * The Retain entries in staged text, in order, each with the refs of its nested
 * `- replaces:` items (other lines are not entries and are skipped).
 * @param {string} text
 * @returns {StagedEntry[]}
 */
export function stagedEntries(text) {
  /** @type {StagedEntry[]} */
  const entries = [];
  for (const line of text.split(/\r?\n/)) {
    const m = ENTRY.exec(line);
    const r = m ? null : REPLACES.exec(line);
    if (m) {
      entries.push({ entry: m[1].trim(), replaces: [] });
    } else if (r && entries.length) {
      entries[entries.length - 1].replaces.push(...r[1].split(",").map((x) => x.trim())
        .filter(Boolean));
    }
  }
  return entries;
}

/**
 * The arguments of `gitmem retain` for an entry and the facts it replaces.
 * @param {string} entry @param {string[]} [replaces]
 */
export function retainArgs(entry, replaces = []) {
  return ["retain", entry, ...replaces.flatMap((ref) => ["--replaces", ref])];
}

/**
 * Commit every staged entry through `gitmem retain`, then remove the staging file. An entry
 * gitmem refuses is kept in `<file>.refused` with gitmem's message, never silently dropped.
 * @param {import("./gitmem.js").Gitmem} gm
 * @returns {Promise<{retained: any[], refused: {entry: string, error: string}[]}>}
 */
export async function drainStaged(gm) {
  const dir = path.join(gm.workspace, STAGING_DIR);
  /** @type {string[]} */
  let names;
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".md")).sort();
  } catch {
    return { retained: [], refused: [] };
  }
  const retained = [];
  const refused = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const claimed = `${file}.draining`; // one drainer per file, even with two gateways
    try {
      await rename(file, claimed);
    } catch {
      continue;
    }
    const text = await readFile(claimed, "utf8");
    const failed = [];
    for (const { entry, replaces } of stagedEntries(text)) {
      try {
        retained.push(await gm.json(retainArgs(entry, replaces)));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        failed.push({ entry, error: message, replaces });
      }
    }
    if (failed.length) {
      await writeFile(`${file}.refused`, failed.map((f) => `- ${f.entry}\n` +
        f.replaces.map((ref) => `  - replaces: ${ref}\n`).join("") + `  # ${f.error}\n`)
        .join(""), { flag: "a" });
      refused.push(...failed.map(({ entry, error }) => ({ entry, error })));
    }
    await unlink(claimed);
  }
  return { retained, refused };
}

/** @param {unknown} value @param {number} fallback */
function numberOr(value, fallback) {
  return typeof value === "number" && Number.isFinite(value) && value >= 0
    ? Math.floor(value) : fallback;
}
