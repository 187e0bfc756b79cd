"""Post ``gitmem review`` on a pull request as ONE comment, updated on every run.

Run by the repository's GitHub Action (``action.yml``) in the checked-out memory repository:

1. the range: ``GITMEM_REVIEW_RANGE``, else the pull request's ``base.sha...head.sha`` from the
   event (three dots: the head against its merge base with the base, like the PR's diff);
2. ``gitmem review RANGE`` renders the Markdown (its first line is a hidden marker), citations
   linked to ``GITHUB_SERVER_URL/GITHUB_REPOSITORY/blob/<commit>/<path>#L<line>``;
3. the review goes to the job summary (``GITHUB_STEP_SUMMARY``) and to the pull request: the
   comment that starts with the marker is updated (PATCH), or one is created (POST) unless the
   pull request changes no memory file.

GitHub REST API at ``GITHUB_API_URL`` (GitHub sets it; tests point it at 127.0.0.1) with
``GITHUB_TOKEN``. Standard library only. Exit status: 0 done (or the token may not comment, as on
a pull request from a fork: then a warning, and the job summary still has the review); 1 GitHub
refused otherwise; gitmem's own status when the review fails.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- gitmem-review -->"
MAX_BODY = 65_000  # GitHub refuses comments over 65,536 characters
PER_PAGE = 100


class GitHubError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"GitHub answered {status}: {message}")
        self.status = status


def github(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """One REST call; the decoded JSON answer."""
    url = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/") + path
    request = urllib.request.Request(
        url, method=method, data=None if body is None else json.dumps(body).encode("utf-8"),
        headers={"Accept": "application/vnd.github+json",
                 "Authorization": f"Bearer {os.environ['GITHUB_TOKEN']}",
                 "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "gitmem-review-action",
                 "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise GitHubError(exc.code, detail) from None


def pull_request() -> tuple[int, str, str]:
    """(number, base sha, head sha) of the pull request that triggered the workflow."""
    path = os.environ.get("GITHUB_EVENT_PATH", "")
    event = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    pr = event.get("pull_request")
    if not pr:
        raise SystemExit("gitmem review: not a pull_request event; set the action's 'range' "
                         "input (and 'comment: false') to review other events")
    return int(pr["number"]), pr["base"]["sha"], pr["head"]["sha"]


def render(spec: str) -> str:
    command = shlex.split(os.environ.get("GITMEM", "")) or [sys.executable, "-m", "gitmem"]
    server, repo = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_REPOSITORY")
    links = ["--link-base", f"{server.rstrip('/')}/{repo}"] if server and repo else []
    proc = subprocess.run([*command, "review", *links, "--", spec], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(proc.returncode)
    body = proc.stdout if proc.stdout.startswith(MARKER) else f"{MARKER}\n{proc.stdout}"
    return fit(body, spec)


def fit(body: str, spec: str) -> str:
    """The body cut at a line to GitHub's size limit, open code blocks and folds closed."""
    if len(body) <= MAX_BODY:
        return body
    kept: list[str] = []
    size = 0
    for line in body.splitlines():
        if size + len(line) + 1 > MAX_BODY - 400:
            break
        kept.append(line)
        size += len(line) + 1
    if sum(line.startswith("```") for line in kept) % 2:
        kept.append("```")
    kept += ["</details>"] * (sum(ln == "<details>" for ln in kept)
                              - sum(ln == "</details>" for ln in kept))
    kept += ["", f"_Cut to fit a comment: `gitmem review {spec}` shows all of it._"]
    return "\n".join(kept) + "\n"


def find_comment(repo: str, number: int) -> dict[str, Any] | None:
    """The pull request's comment that starts with the marker (the first, if several)."""
    page = 1
    while True:
        comments = github("GET", f"/repos/{repo}/issues/{number}/comments"
                                 f"?per_page={PER_PAGE}&page={page}")
        for comment in comments:
            if (comment.get("body") or "").startswith(MARKER):
                return dict(comment)
        if len(comments) < PER_PAGE:
            return None
        page += 1


def changes_nothing(body: str) -> bool:
    """A review of a range without memory changes is the marker and one line."""
    return len(body.strip().splitlines()) == 2


def post(repo: str, number: int, body: str) -> dict[str, Any] | None:
    """Update the pull request's review comment, or create it, unless there is none yet and
    the memory did not change (no comment on a pull request that does not touch memory)."""
    found = find_comment(repo, number)
    if found is not None:
        return dict(github("PATCH", f"/repos/{repo}/issues/comments/{found['id']}",
                           {"body": body}))
    if changes_nothing(body):
        return None
    return dict(github("POST", f"/repos/{repo}/issues/{number}/comments", {"body": body}))


def append(variable: str, text: str) -> None:
    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)


def main() -> int:
    spec = os.environ.get("GITMEM_REVIEW_RANGE", "").strip()
    wants_comment = os.environ.get("GITMEM_REVIEW_COMMENT", "true").lower() != "false"
    number = 0
    if not spec or wants_comment:
        number, base, head = pull_request()
        spec = spec or f"{base}...{head}"
    body = render(spec)
    append("GITHUB_STEP_SUMMARY", body)
    if not wants_comment:
        print(body, end="")
        return 0
    try:
        comment = post(os.environ["GITHUB_REPOSITORY"], number, body)
    except GitHubError as exc:
        if exc.status in (403, 404):  # a fork's read-only token, or no permission to comment
            print(f"::warning::gitmem review could not comment ({exc}); the review is in the "
                  "job summary. Give the workflow 'pull-requests: write' permission.")
            return 0
        print(f"::error::gitmem review could not comment: {exc}")
        return 1
    if comment is None:
        print("gitmem review: the pull request changes no memory file; no comment")
        return 0
    append("GITHUB_OUTPUT", f"comment-url={comment.get('html_url', '')}\n")
    print(f"gitmem review: {comment.get('html_url', comment.get('id'))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
