"""The release workflow (.github/workflows/release.yml): on a version tag, build the sdist and the
wheel, answer the sample recall with the wheel installed in a fresh environment, then publish with
PyPI trusted publishing. Its steps were run by hand once (a copy of the checkout, the build job's
run steps in order); this keeps their shape."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parent.parent / ".github" / "workflows" / "release.yml"


def test_release_builds_checks_the_wheel_and_publishes_with_trusted_publishing() -> None:
    wf = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert wf[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key 'on' as True
    assert wf["permissions"] == {"contents": "read"}
    build, publish = wf["jobs"]["build"], wf["jobs"]["publish"]
    script = "\n".join(step.get("run", "") for step in build["steps"])
    for needed in ("python -m build", "python -m venv", "pip install dist/*.whl",
                   "python fixtures/build_fixture.py", 'recall "gateway host"',
                   "grep -q '^memory/2025-11-27.md#L14'", "GITHUB_REF_NAME#v"):
        assert needed in script, needed
    assert "permissions" not in build  # no token to publish with in the job that builds
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    uses = [step.get("uses", "") for step in publish["steps"]]
    assert uses[-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert not any("password" in str(step) or "token" in str(step.get("with", {}))
                   for step in publish["steps"])  # trusted publishing: no secret
