"""scripts/install_packages.py: uv gets exactly the sources pip's configuration names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from scripts.install_packages import parse_pip_config, uv_plan

LISTING = """\
:env:.find-links='/srv/wheels'
:env:.default-timeout='180'
:env:.disable-pip-version-check='1'
global.cert='/etc/ssl/bundle.pem'
global.constraint='/etc/pip/constraints.txt'
global.extra-index-url='file:///srv/a/simple file:///srv/b/simple'
global.find-links='/ignored/because/env/wins'
install.extra-index-url='file:///srv/install-section/simple'
download.index-url='file:///not/for/install'
"""


def test_precedence_is_pips_env_then_install_section_then_global() -> None:
    settings = parse_pip_config(LISTING)
    assert settings["find-links"] == "/srv/wheels"
    assert settings["extra-index-url"] == "file:///srv/install-section/simple"
    assert settings["constraint"] == "/etc/pip/constraints.txt"
    assert "index-url" not in settings  # [download] is another command's section


def test_every_source_setting_reaches_uv() -> None:
    plan = uv_plan(parse_pip_config(LISTING.replace("install.extra", "wheel.extra")))
    args = plan.args
    assert args[args.index("--constraints") + 1] == "/etc/pip/constraints.txt"
    assert args[args.index("--find-links") + 1] == "/srv/wheels"
    indexes = [args[i + 1] for i, arg in enumerate(args) if arg == "--index"]
    assert indexes == ["file:///srv/a/simple", "file:///srv/b/simple"]
    # pip picks the best version over all indexes together; uv must not stop at the first one
    assert args[args.index("--index-strategy") + 1] == "unsafe-best-match"
    assert "--default-index" not in args  # no index-url: both default to the public index
    assert plan.env == {"SSL_CERT_FILE": "/etc/ssl/bundle.pem", "UV_HTTP_TIMEOUT": "180"}
    assert plan.unsupported == []


def test_index_url_no_index_trusted_host_and_no_cache() -> None:
    plan = uv_plan(
        {
            "index-url": "https://mirror.invalid/simple",
            "no-index": "true",
            "trusted-host": "mirror.invalid other.invalid",
            "no-cache-dir": "1",
        }
    )
    assert plan.args[plan.args.index("--default-index") + 1] == "https://mirror.invalid/simple"
    assert "--no-index" in plan.args and "--no-cache" in plan.args
    hosts = [plan.args[i + 1] for i, a in enumerate(plan.args) if a == "--allow-insecure-host"]
    assert hosts == ["mirror.invalid", "other.invalid"]
    assert "--no-index" not in uv_plan({"no-index": "false"}).args


def test_a_setting_uv_cannot_follow_is_named() -> None:
    plan = uv_plan({"proxy": "http://proxy.invalid:3128", "client-cert": "/k.pem", "quiet": "1"})
    assert plan.unsupported == ["client-cert", "proxy"]


def test_reads_the_settings_pip_itself_uses(tmp_path: Path) -> None:
    """The real `pip config list`: a config file's values and a PIP_* variable over them."""
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\nextra-index-url = file:///srv/x/simple\n"
        "[install]\nconstraint = /srv/c.txt\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {"PIP_CONFIG_FILE": str(config), "PIP_FIND_LINKS": "/srv/env-wheels"}
    code = (
        "import json, sys; from scripts.install_packages import pip_settings; "
        "print(json.dumps(pip_settings(sys.executable)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    settings = json.loads(out)
    assert settings["extra-index-url"] == "file:///srv/x/simple"
    assert settings["constraint"] == "/srv/c.txt"
    assert settings["find-links"] == "/srv/env-wheels"


def test_refuses_an_interpreter_outside_a_venv() -> None:
    code = (
        "import sys; sys.prefix = sys.base_prefix; from scripts.install_packages import main; "
        "main(['requirements.txt'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "is not a venv's interpreter" in done.stderr
