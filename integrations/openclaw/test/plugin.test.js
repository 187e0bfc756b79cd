// @ts-check
// The plugin's own parts with node's test runner. Tests that need gitmem and git run the real
// ones: GITMEM_COMMAND names the gitmem executable (tests/test_openclaw.py runs this file).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";

import plugin, { createTools, createBackends } from "../index.js";
import { translateArgs } from "../src/cli.js";
import { Gitmem, GitmemError, errorMessage } from "../src/gitmem.js";
import {
  createSearchManager, recallArgs, searchPayload, toHit, SNIPPET_LIMIT,
} from "../src/memory.js";
import {
  STAGING_DIR, buildFlushPlan, buildPromptSection, drainStaged, retainArgs, stagedEntries,
} from "../src/writing.js";

const GITMEM = process.env.GITMEM_COMMAND;

const RESULT = {
  kind: "world", snippet: "Moved the gateway host to The Castle.", path: "memory/2025-11-27.md",
  start_line: 14, end_line: 14, commit: "e41078c", source: "memory/2025-11-27.md#L14",
  timestamp: "2025-11-27", entities: ["Peter"], score: 0.9, uncommitted: false,
  superseded_by: null,
};

test("a hit carries gitmem's citation, and says when a later fact replaced it", () => {
  const hit = toHit(RESULT);
  assert.equal(hit.citation, "memory/2025-11-27.md#L14");
  assert.equal(hit.source, "memory");
  assert.equal(hit.snippet, "Moved the gateway host to The Castle.\n\nSource: memory/2025-11-27.md#L14");
  const old = toHit({ ...RESULT, source: "memory/2025-11-10.md#L14@4184bcc",
    superseded_by: "memory/2025-11-27.md#L14" });
  assert.match(old.snippet, /\(superseded by memory\/2025-11-27\.md#L14\)\n\nSource: memory\/2025-11-10\.md#L14@4184bcc$/);
  assert.equal(old.superseded_by, "memory/2025-11-27.md#L14");
  const long = toHit({ ...RESULT, snippet: "x".repeat(5000) });
  assert.ok(long.snippet.length <= SNIPPET_LIMIT && long.snippet.endsWith("#L14"));
  assert.equal(hit.truncated, false);
  const cut = toHit({ ...RESULT, snippet: "y".repeat(5000), truncated: true });
  assert.equal(cut.truncated, true);
  assert.ok(cut.snippet.length <= SNIPPET_LIMIT);
  assert.match(cut.snippet, /\(truncated: memory_get memory\/2025-11-27\.md#L14 reads it whole\)\n\nSource: memory\/2025-11-27\.md#L14$/);
});

test("the warm process's start-up warning is said with every answer, once", () => {
  const answer = { mode: "lexical", results: [RESULT], warnings: ["w1"], provider: { name: "none" } };
  assert.deepEqual(searchPayload(answer, "no config").warnings, ["no config", "w1"]);
  assert.deepEqual(searchPayload({ ...answer, warnings: ["no config"] }, "no config").warnings,
    ["no config"]);
  assert.equal(searchPayload({ ...answer, warnings: [] }).warnings, undefined);
});

test("a listing by date says so, with its window", () => {
  const window = { source: "query", phrase: "last week", since: "2026-11-23", until: "2026-11-29",
    applied_as: "filter" };
  const answer = { mode: "lexical", results: [RESULT], warnings: [], provider: { name: "none" },
    time_window: window, listing: "window" };
  assert.equal(searchPayload(answer).listing, "window");
  assert.deepEqual(searchPayload(answer).timeWindow, window);
  assert.equal(searchPayload({ ...answer, listing: null }).listing, undefined);
});

test("search options become gitmem recall's flags", () => {
  assert.deepEqual(recallArgs({ query: "q", maxResults: 25, minScore: 0.5, since: "30d",
    entity: ["Peter"], kind: ["W", "O"], lexicalOnly: true }),
  ["recall", "q", "--k", "25", "--min-score", "0.5", "--mode", "lexical", "--since", "30d",
    "--entity", "Peter", "--kind", "W", "--kind", "O"]);
  assert.deepEqual(translateArgs(["--query", "gateway", "--max-results", "5", "--agent=ops",
    "--since", "30d"], "recall"), { agent: "ops", rest: ["gateway", "--k", "5", "--since", "30d"] });
  assert.deepEqual(translateArgs(["--since", "7d", "--agent", "main"], "reflect"),
    { agent: "main", rest: ["--since", "7d"] });
});

test("gitmem's error message, without its prefix", () => {
  assert.equal(errorMessage("gitmem: no such memory file: x.md\n", 1), "no such memory file: x.md");
  assert.equal(errorMessage("", 4), "gitmem exited with status 4");
});

test("the prompt section teaches Retain entries and citations", () => {
  const lines = buildPromptSection({ availableTools: new Set(["memory_search", "memory_get",
    "memory_retain"]) });
  const text = lines.join("\n");
  assert.match(text, /^## Memory \(gitmem/);
  assert.match(text, /- O\(c=0\.8\) @Peter:/);
  assert.match(text, /memory_retain/);
  assert.match(text, /replaces/);
  assert.match(text, /may_replace/);
  assert.match(text, /Source: <path#Lx-Ly>/);
  assert.deepEqual(buildPromptSection({ availableTools: new Set(["read"]) }), []);
  assert.doesNotMatch(buildPromptSection({ availableTools: new Set(["memory_search"]),
    citationsMode: "off" }).join("\n"), /Source:/);
});

test("the flush plan stages entries under .memory/ for gitmem retain", () => {
  const now = Date.UTC(2026, 2, 6, 12);
  const plan = buildFlushPlan({ nowMs: now, contextWindowTokens: 100000 });
  assert.ok(plan);
  assert.equal(plan.relativePath, `${STAGING_DIR}/2026-03-06.md`);
  assert.match(plan.prompt, /gitmem retain/);
  assert.match(plan.prompt, / {2}- replaces: f-3fa9c2e11aa0/);
  assert.match(plan.prompt, /NO_REPLY/);
  assert.equal(plan.softThresholdTokens, 4000);
  assert.equal(buildFlushPlan({ cfg: { agents: { defaults: { compaction: { memoryFlush:
    { enabled: false } } } } } }), null);
  assert.equal(buildFlushPlan({ contextWindowTokens: 24000 })?.softThresholdTokens, 2000);
});

test("staged text yields its Retain entries and what each replaces", () => {
  assert.deepEqual(stagedEntries("# notes\n- W @Peter: Moved.\r\n  - replaces: f-3fa9c2e11aa0, " +
    "memory/2025-11-10.md#L14\nnot an entry\n  - replaces: f-000000000000\n" +
    "- O(c=0.7) @Peter @Castle: Likes it.\n- B: Did a thing.\n-W: bad\n  - W: nested\n"),
  [{ entry: "W @Peter: Moved.", replaces: ["f-3fa9c2e11aa0", "memory/2025-11-10.md#L14",
    "f-000000000000"] },
  { entry: "O(c=0.7) @Peter @Castle: Likes it.", replaces: [] },
  { entry: "B: Did a thing.", replaces: [] }]);
  assert.deepEqual(retainArgs("W: x", ["f-1", "m.md#L2"]),
    ["retain", "W: x", "--replaces", "f-1", "--replaces", "m.md#L2"]);
});

test("the entry registers a memory capability, tools and the memory CLI", () => {
  /** @type {any[]} */
  const seen = [];
  const api = {
    pluginConfig: {}, config: {},
    registerMemoryCapability: (/** @type {any} */ c) => seen.push(["capability", c]),
    registerTool: (/** @type {any} */ f, /** @type {any} */ o) => seen.push(["tool", f, o]),
    registerCli: (/** @type {any} */ f, /** @type {any} */ o) => seen.push(["cli", f, o]),
    on: (/** @type {string} */ name) => seen.push(["on", name]),
  };
  plugin.register(api);
  const capability = seen.find((s) => s[0] === "capability")[1];
  assert.equal(typeof capability.promptBuilder, "function");
  assert.equal(typeof capability.flushPlanResolver, "function");
  assert.equal(typeof capability.runtime.getMemorySearchManager, "function");
  const manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
  assert.deepEqual(seen.find((s) => s[0] === "tool")[2].names, manifest.contracts.tools);
  assert.equal(manifest.kind, plugin.kind);
  assert.equal(manifest.id, plugin.id);
});

/** A git repository with one committed daily note, and a Gitmem client for it. */
function workspace() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gitmem-plugin-"));
  const git = (/** @type {string[]} */ ...args) => execFileSync("git", ["-C", dir, ...args]);
  git("init", "-q");
  mkdirSync(path.join(dir, "memory"));
  writeFileSync(path.join(dir, "memory", "2026-03-06.md"),
    "# 2026-03-06\n\n## Retain\n- W @Peter: The gateway host is the old NUC.\n");
  git("add", ".");
  git("commit", "-q", "-m", "day");
  return { dir, git, gm: new Gitmem({ workspace: dir, command: GITMEM, warm: false }) };
}

test("staged flush entries are committed by gitmem retain; refused ones are kept", {
  skip: GITMEM ? false : "GITMEM_COMMAND is not set (tests/test_openclaw.py sets it)",
}, async () => {
  const { dir, git, gm } = workspace();
  const staged = path.join(dir, STAGING_DIR);
  mkdirSync(staged, { recursive: true });
  writeFileSync(path.join(staged, "2026-03-07.md"),
    "- W @Peter @The-Castle: Moved the gateway host to The Castle.\n" +
    "  - replaces: memory/2026-03-06.md#L4\n- O(c=7) @Peter: nonsense\n");
  const { retained, refused } = await drainStaged(gm);
  assert.equal(retained.length, 1);
  assert.equal(retained[0].text, "Moved the gateway host to The Castle.");
  assert.equal(retained[0].replaces.length, 1); // the declared replacement, as a fact id
  assert.match(retained[0].replaces[0], /^f-[0-9a-f]{12}$/);
  assert.equal(refused.length, 1);
  assert.match(readFileSync(path.join(staged, "2026-03-07.md.refused"), "utf8"), /nonsense/);
  assert.ok(!existsSync(path.join(staged, "2026-03-07.md")));
  const log = git("log", "--format=%H", "-n", "1", "--", "memory/").toString().trim();
  assert.equal(log, retained[0].commit);
  assert.deepEqual(await drainStaged(gm), { retained: [], refused: [] }); // nothing left
});

test("the tools answer from gitmem, errors carry gitmem's message", {
  skip: GITMEM ? false : "GITMEM_COMMAND is not set (tests/test_openclaw.py sets it)",
}, async () => {
  const { dir } = workspace();
  const backends = createBackends({ pluginConfig: { command: GITMEM, warm: false,
    workspace: dir }, config: {} });
  const tools = Object.fromEntries(createTools(backends, {}).map((t) => [t.name, t]));
  const found = await tools.memory_search.execute("1", { query: "gateway host" });
  assert.equal(found.details.results[0].citation, "memory/2026-03-06.md#L4");
  const read = await tools.memory_get.execute("2", { path: "memory/2026-03-06.md#L4" });
  assert.deepEqual([read.details.status, read.details.text],
    ["ok", "- W @Peter: The gateway host is the old NUC."]);
  const missing = await tools.memory_get.execute("3", { path: "memory/2020-01-01.md" });
  assert.equal(missing.details.status, "not_found");
  await assert.rejects(tools.memory_get.execute("4", { path: "../secret.md" }),
    (/** @type {any} */ e) => e instanceof GitmemError && /outside the workspace/.test(e.message));
  await assert.rejects(tools.memory_search.execute("5", { query: "x", since: "blue moon" }),
    (/** @type {any} */ e) => e.code === 2 && /invalid time 'blue moon'/.test(e.message));
  const kept = await tools.memory_retain.execute("6", { entry: "W @Peter: The gateway host " +
    "is The Castle now.", replaces: "memory/2026-03-06.md#L4" });
  assert.equal(kept.details.replaces.length, 1);
  const after = await tools.memory_search.execute("7", { query: "gateway host" });
  const old = after.details.results.find((/** @type {any} */ h) => h.path === "memory/2026-03-06.md");
  assert.equal(old.superseded_by, kept.details.source);
  assert.equal(old.superseded_basis, "declared");
  assert.equal(old.snippet, "The gateway host is the old NUC.\n" +
    `(superseded by ${kept.details.source})\n\nSource: memory/2026-03-06.md#L4`);
});

test("trigger phrases of MEMORY.md reach OpenClaw's trigger recall; importance rides along", {
  skip: GITMEM && process.env.OPENCLAW_DIR ? false
    : "GITMEM_COMMAND and OPENCLAW_DIR are not set (tests/test_openclaw.py sets them)",
}, async () => {
  const { dir, git, gm } = workspace();
  writeFileSync(path.join(dir, "MEMORY.md"), "# Memory\n\n" +
    "- Keep the gateway on loopback. <!-- trigger: gateway setup, network safety --> " +
    "<!-- importance: 9 -->\n- The NAS is in the attic.\n");
  writeFileSync(path.join(dir, "memory", "2026-03-07.md"), "# 2026-03-07\n\n" +
    "- The printer sits in the hall. <!-- trigger: printer setup -->\n");
  git("add", ".");
  git("commit", "-q", "-m", "curated");
  const manager = await createSearchManager(gm);
  const candidates = await manager.listTriggerCandidates();
  assert.deepEqual(candidates.map((/** @type {any} */ c) => [c.path, c.startLine, c.triggers,
    c.importance]), [["MEMORY.md", 3, "gateway setup; network safety", 9]]);
  // OpenClaw's own selection (extensions/active-memory/trigger-recall.js) takes it for a
  // message that names a trigger, and not for one that does not
  const recall = await import(path.join(process.env.OPENCLAW_DIR ?? "", "dist", "extensions",
    "active-memory", "trigger-recall.js"));
  const picked = recall.selectStrongTriggerMatches("what was the gateway setup again?",
    candidates);
  assert.deepEqual(picked.map((/** @type {any} */ c) => c.citation), ["MEMORY.md#L3"]);
  assert.deepEqual(recall.selectStrongTriggerMatches("how is the weather?", candidates), []);
  const hits = await manager.search("gateway loopback");
  assert.equal(hits[0].importance, 9);
  assert.equal(hits[0].triggers, "gateway setup; network safety");
});
