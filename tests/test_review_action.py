"""The review GitHub Action: ``action.yml`` and its script, run on a local repository against a
fake GitHub API on 127.0.0.1 (never against GitHub): the first run creates the comment, later
runs update it, and there is never a second one."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from github_server import GitHubServer

from gitmem.review.review_markdown import MARKER
from testing.bounds import FAILURE_SECONDS
from testing.repo import commit_all, git, make_repo, write

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".github" / "scripts" / "review_comment.py"
TOKEN, REPO, PR = "test-token", "octo/memory", 7


def opinions(confidence: str) -> str:
    return ("# Opinions\n\n## @Peter prefers concise replies\n<!-- opinion: o-3fa9c2e1 -->\n"
            f"- confidence: {confidence}\n- updated: 2025-11-10\n")


def pr_repo(tmp_path: Path) -> tuple[Path, str, str]:
    repo = make_repo(tmp_path)
    write(repo, "bank/opinions.md", opinions("0.90"))
    base = commit_all(repo, "base", "2025-11-10T20:00:00+00:00")
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "bank/opinions.md", opinions("0.75"))
    write(repo, "memory/2025-11-12.md", "# 2025-11-12\n\n## Retain\n- W @Peter: Peter is in Oslo.\n")
    head = commit_all(repo, "feature", "2025-11-12T20:00:00+00:00")
    return repo, base, head


def run_action_script(repo: Path, api: GitHubServer, base: str, head: str, tmp_path: Path,
                      **env: str) -> subprocess.CompletedProcess[str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR, "base": {"sha": base},
                                                  "head": {"sha": head}}}), encoding="utf-8")
    full = {**os.environ, "GITHUB_API_URL": api.url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_TOKEN": TOKEN, "GITHUB_EVENT_PATH": str(event),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            "PYTHONPATH": str(ROOT),  # the gitmem of this checkout, as the Action installs it
            **env}
    return subprocess.run([sys.executable, str(SCRIPT)], cwd=repo, env=full, capture_output=True,
                          text=True, timeout=FAILURE_SECONDS, check=False)


def ours(api: GitHubServer) -> list[dict[str, Any]]:
    return [c for c in api.comments.get(PR, []) if c["body"].startswith(MARKER)]


def test_first_run_creates_the_comment_later_runs_update_it(tmp_path: Path) -> None:
    repo, base, head = pr_repo(tmp_path)
    with GitHubServer(TOKEN, REPO) as api:
        for n in range(120):  # two pages of other comments, one quoting the marker
            api.seed(PR, f"comment {n}" if n != 60 else f"quoting {MARKER} is not ours")
        proc = run_action_script(repo, api, base, head, tmp_path,
                                 GITHUB_SERVER_URL="https://github.invalid")
        assert proc.returncode == 0, proc.stderr
        (comment,) = ours(api)
        assert "| 1 | `@Peter` prefers concise replies | 0.90 → 0.75 | ▼ −0.15 |" in comment["body"]
        assert (f"| + | world | Peter is in Oslo. | [`memory/2025-11-12.md#L4@{head[:7]}`]"
                f"(https://github.invalid/{REPO}/blob/{head}/memory/2025-11-12.md#L4) |"
                ) in comment["body"]
        assert [r.method for r in api.requests] == ["GET", "GET", "POST"]
        assert f"comment-url={comment['html_url']}" in \
            (tmp_path / "output.txt").read_text(encoding="utf-8")
        assert (tmp_path / "summary.md").read_text(encoding="utf-8") == comment["body"]

        write(repo, "bank/opinions.md", opinions("0.60"))  # the pull request gets a new push
        new_head = commit_all(repo, "push", "2025-11-13T20:00:00+00:00")
        api.requests.clear()
        proc = run_action_script(repo, api, base, new_head, tmp_path)
        assert proc.returncode == 0, proc.stderr
        (updated,) = ours(api)
        assert updated["id"] == comment["id"]
        assert "0.90 → 0.60" in updated["body"] and "0.90 → 0.75" not in updated["body"]
        assert [r.method for r in api.requests] == ["GET", "GET", "PATCH"]
        assert api.requests[-1].path == f"/repos/{REPO}/issues/comments/{comment['id']}"
        assert len(api.comments[PR]) == 121


def test_no_comment_on_a_pull_request_without_memory_changes(tmp_path: Path) -> None:
    repo, base, head = pr_repo(tmp_path)
    write(repo, "README.md", "# docs only\n")
    docs = commit_all(repo, "docs", "2025-11-13T20:00:00+00:00")
    with GitHubServer(TOKEN, REPO) as api:
        proc = run_action_script(repo, api, head, docs, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "changes no memory file; no comment" in proc.stdout
        assert ours(api) == [] and [r.method for r in api.requests] == ["GET"]
        proc = run_action_script(repo, api, base, head, tmp_path)  # memory changes: a comment
        assert proc.returncode == 0 and len(ours(api)) == 1
        proc = run_action_script(repo, api, head, docs, tmp_path)  # ... that later says so
        assert proc.returncode == 0
        (comment,) = ours(api)
        assert comment["body"].splitlines()[1].startswith("No memory files changed in")


def test_the_range_is_the_pull_requests_merge_base_diff(tmp_path: Path) -> None:
    repo, _, head = pr_repo(tmp_path)
    git(repo, "checkout", "-q", "main")  # main moves on after the branch point
    write(repo, "memory/2025-11-20.md", "# 2025-11-20\n\n## Retain\n- W @Andy: Andy is back.\n")
    moved = commit_all(repo, "main", "2025-11-20T20:00:00+00:00")
    git(repo, "checkout", "-q", "feature")
    with GitHubServer(TOKEN, REPO) as api:
        proc = run_action_script(repo, api, moved, head, tmp_path)
        assert proc.returncode == 0, proc.stderr
        (comment,) = ours(api)
    assert f"### Memory review: `{moved}...{head}`" in comment["body"]
    assert "Andy" not in comment["body"]  # main's own change is not the pull request's


def test_a_token_that_may_not_comment_warns_and_keeps_the_summary(tmp_path: Path) -> None:
    repo, base, head = pr_repo(tmp_path)
    with GitHubServer(TOKEN, REPO) as api:
        api.refuse_writes = True  # a pull request from a fork: read-only token
        proc = run_action_script(repo, api, base, head, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "::warning::gitmem review could not comment" in proc.stdout
        assert ours(api) == []
    assert (tmp_path / "summary.md").read_text(encoding="utf-8").startswith(MARKER)


def test_a_bad_token_fails_and_a_bad_range_reports_gitmems_error(tmp_path: Path) -> None:
    repo, base, head = pr_repo(tmp_path)
    with GitHubServer("another-token", REPO) as api:
        proc = run_action_script(repo, api, base, head, tmp_path)
        assert proc.returncode == 1 and "GitHub answered 401" in proc.stdout
        proc = run_action_script(repo, api, base, head, tmp_path,
                                 GITMEM_REVIEW_RANGE="nope...HEAD")
        assert proc.returncode == 2 and "unknown revision 'nope'" in proc.stderr
        assert api.requests and all(r.method == "GET" for r in api.requests)


def test_summary_only_needs_no_pull_request(tmp_path: Path) -> None:
    repo, base, _ = pr_repo(tmp_path)
    with GitHubServer(TOKEN, REPO) as api:
        proc = run_action_script(repo, api, base, "-", tmp_path, GITMEM_REVIEW_RANGE=f"{base}..",
                                 GITMEM_REVIEW_COMMENT="false", GITHUB_EVENT_PATH="")
        assert proc.returncode == 0, proc.stderr
        assert api.requests == []
    assert proc.stdout.startswith(MARKER) and "0.90 → 0.75" in proc.stdout


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("review_comment", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_long_review_is_cut_to_fit_a_comment() -> None:
    script = load_script()
    rows = [f"| + | world | fact number {n} {'x' * 80} | `memory/x.md#L{n}@abc1234` |"
            for n in range(2000)]
    body = "\n".join([MARKER, "#### Facts by entity", "<details>", "<summary>s</summary>",
                      "```mermaid", *rows, "```", "</details>"]) + "\n"
    cut = script.fit(body, "main...HEAD")
    assert len(cut) <= 65_536 and cut.startswith(MARKER)
    lines = cut.splitlines()
    assert sum(ln.startswith("```") for ln in lines) % 2 == 0
    assert lines.count("<details>") == lines.count("</details>")
    assert lines[-1] == "_Cut to fit a comment: `gitmem review main...HEAD` shows all of it._"
    assert script.fit("short\n", "x") == "short\n"


def test_action_yml_installs_this_checkout_and_runs_the_script() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    runs = "\n".join(step.get("run", "") for step in steps)
    assert 'pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"' in runs
    assert "pip install gitmem" not in runs  # PyPI's gitmem is another project
    script = re.search(r'python "\$GITHUB_ACTION_PATH/(\S+)"', runs)
    assert script is not None and (ROOT / script.group(1)) == SCRIPT
    review = next(step for step in steps if step.get("id") == "review")
    assert review["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    assert set(action["inputs"]) == {"range", "working-directory", "comment", "python-version",
                                     "github-token"}


def test_readme_shows_the_workflow() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    workflows = [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", readme,
                                                               flags=re.S)]
    workflow = next(w for w in workflows if isinstance(w, dict) and "jobs" in w)
    assert "pull_request" in workflow[True]  # YAML reads the key `on` as True
    assert workflow["permissions"]["pull-requests"] == "write"
    steps = next(iter(workflow["jobs"].values()))["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    assert any("gitmem" in s.get("uses", "") for s in steps if s is not checkout)
    assert "gitmem review origin/main..HEAD" in readme
    assert not any("review" in line for line in readme.splitlines()
                   if line.startswith("Not yet built"))
