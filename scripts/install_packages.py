#!/usr/bin/env python
"""Install a requirements file into this interpreter's venv with uv, from pip's own sources.

    .venv/bin/python scripts/install_packages.py requirements.txt [--installer uv|pip]

Why: pip installed the 134 pinned packages of a fresh venv in 66 s on a quiet 2-core machine
(295 s at load ~12), most of it byte-compiling and unpacking one wheel after another; uv
resolves the same set (the same versions, compared with `pip freeze`) and installs it in ~10 s
(docs/ISSUES.md#first-page-install). uv does not read pip's configuration, so this
script reads pip's effective settings (`pip config list`: its files and PIP_* variables) and
passes each one that decides what gets installed to uv: indexes, find-links, constraints, no
index, trusted hosts, the certificate bundle, the timeout, no cache. Nothing about a machine is
written in the repository. uv itself (pinned in requirements-installer.txt) is installed first,
by pip, from the same sources.

A pip setting uv has no equivalent for here (a proxy, a client certificate, ...) makes the
install run with pip instead, and it says so; `--installer pip` asks for pip directly
(`make run INSTALLER=pip`). Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import ast
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALLER_REQUIREMENTS = ROOT / "requirements-installer.txt"

# pip settings that change nothing about which files get installed from where.
IGNORED = frozenset(
    {
        "disable-pip-version-check",
        "no-input",
        "progress-bar",
        "quiet",
        "verbose",
        "retries",
        "root-user-action",
        "no-warn-script-location",
        "no-color",
        "require-virtualenv",
    }
)
# The sections `pip install` reads, lowest precedence first (pip: the command's section
# overrides [global], and PIP_* variables override both).
SECTIONS = ("global", "install", ":env:")
TRUE = frozenset({"1", "true", "yes", "on"})


@dataclass
class UvPlan:
    """uv's command-line arguments and environment for pip's settings, or why uv cannot follow
    them (`unsupported` names the pip settings it has no equivalent for)."""

    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    unsupported: list[str] = field(default_factory=list)


def parse_pip_config(listing: str) -> dict[str, str]:
    """pip's effective install settings from `pip config list` lines (`section.key='value'`)."""
    by_section: dict[str, dict[str, str]] = {section: {} for section in SECTIONS}
    for line in listing.splitlines():
        name, sep, raw = line.partition("=")
        section, dot, key = name.rpartition(".")
        if not sep or not dot or section not in by_section:
            continue  # another command's section ([download], [freeze], ...) or no setting
        value = ast.literal_eval(raw) if raw[:1] in "'\"" else raw
        by_section[section][key.strip().replace("_", "-")] = str(value)
    merged: dict[str, str] = {}
    for section in SECTIONS:
        merged.update(by_section[section])
    return merged


def uv_plan(settings: Mapping[str, str]) -> UvPlan:
    """The uv arguments that install from exactly the sources pip's `settings` name."""
    plan = UvPlan()
    for key, value in sorted(settings.items()):
        items = value.split()
        if key == "index-url":
            plan.args += ["--default-index", value.strip()]
        elif key == "extra-index-url":
            for url in items:
                plan.args += ["--index", url]
        elif key == "find-links":
            for place in items:
                plan.args += ["--find-links", place]
        elif key in ("constraint", "constraints"):
            for path in items:
                plan.args += ["--constraints", path]
        elif key == "trusted-host":
            for host in items:
                plan.args += ["--allow-insecure-host", host]
        elif key == "no-index":
            if value.strip().lower() in TRUE:
                plan.args.append("--no-index")
        elif key == "no-cache-dir":
            if value.strip().lower() in TRUE:
                plan.args.append("--no-cache")
        elif key == "cert":
            plan.env["SSL_CERT_FILE"] = value.strip()
        elif key in ("default-timeout", "timeout"):
            plan.env["UV_HTTP_TIMEOUT"] = str(round(float(value)))
        elif key not in IGNORED:
            plan.unsupported.append(key)
    # pip takes the best version over all its indexes together; uv's default stops at the first
    # index that has the package.
    plan.args += ["--index-strategy", "unsafe-best-match"]
    return plan


def pip_settings(python: str) -> dict[str, str]:
    listing = subprocess.run(
        [python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    return parse_pip_config(listing)


def _pip_install(python: str, args: Sequence[str]) -> int:
    cmd = [python, "-m", "pip", "--disable-pip-version-check", "install", *args]
    return subprocess.run(cmd, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("requirements", help="a requirements file, e.g. requirements.txt")
    parser.add_argument("--installer", choices=("uv", "pip"), default="uv")
    args = parser.parse_args(argv)
    python = sys.executable
    if sys.prefix == sys.base_prefix:
        parser.error(f"{python} is not a venv's interpreter: run it as .venv/bin/python")
    if args.installer == "pip":
        return _pip_install(python, ["-r", args.requirements])
    plan = uv_plan(pip_settings(python))
    if plan.unsupported:
        print(
            "install_packages: uv has no equivalent here of pip's setting(s) "
            f"{', '.join(plan.unsupported)}: installing with pip instead.",
            file=sys.stderr,
            flush=True,
        )
        return _pip_install(python, ["-r", args.requirements])
    status = _pip_install(python, ["-q", "-r", str(INSTALLER_REQUIREMENTS)])
    if status:
        return status
    cmd = [python, "-m", "uv", "pip", "install", "--python", python, *plan.args]
    cmd += ["-r", args.requirements]
    return subprocess.run(cmd, env={**os.environ, **plan.env}, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
