"""Deployment safety: the README's production settings pass `check --deploy` with no warnings,
the demo loader makes no account with a published password unless DEBUG is on, and the
systemd unit in deploy/ runs `manage.py serve` as the README says."""

import io
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from games.catalog import VARIANTS
from games.management.commands.load_demo import DEMO_ACCOUNTS
from tests.pytest_env import TEST_ENV_DEFAULTS
from tests.test_settings_env import ENV_KEYS as SETTINGS_ENV

BASE_DIR = Path(__file__).resolve().parent.parent
# `export NAME=value`, with an optional `  # comment` after it.
EXPORT = re.compile(r"^export (\w+)=(.*?)(?:\s+#.*)?$")


def clean_env(**env_vars: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in SETTINGS_ENV}
    env.update(env_vars, DJANGO_SETTINGS_MODULE="okeysite.settings")
    return env


def production_env_from_the_readme() -> dict[str, str]:
    """The variables of the README's "Production settings" block (a fresh SECRET_KEY for the
    one it generates with a command)."""
    readme = (BASE_DIR / "README.md").read_text()
    section = readme.split("### Production settings", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    env = {}
    for line in block.splitlines():
        found = EXPORT.match(line)
        assert found, f"not an `export NAME=value` line: {line!r}"
        name, value = found.groups()
        env[name] = value
    assert env["SECRET_KEY"].startswith('"$(python3 -c'), env["SECRET_KEY"]  # made here instead
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    return env


@pytest.mark.slow
def test_the_documented_production_settings_pass_check_deploy() -> None:
    production = production_env_from_the_readme()
    assert production["DEBUG"] == "false"
    # Nothing of the test suite's own environment (its key, plain-HTTP defaults) leaks in.
    assert set(TEST_ENV_DEFAULTS) <= set(SETTINGS_ENV)
    output = check_deploy(clean_env(**production))
    assert "WARNING" not in output and "?: (" not in output, output


def check_deploy(env: dict[str, str]) -> str:
    """``manage.py check --deploy`` in ``env``: it passes; returns what it printed."""
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues" in output, output
    return output


@pytest.mark.slow
def test_check_deploy_warns_about_a_development_style_configuration() -> None:
    """The check itself bites: a short key and no HSTS are reported (so the test above means
    something)."""
    env = clean_env(DEBUG="false", SECRET_KEY="short-secret")

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "security.W009" in output  # the secret key
    assert "security.W004" in output  # HSTS


@pytest.mark.django_db
def test_load_demo_creates_no_account_with_a_published_password_when_debug_is_off(
    settings: Any,
) -> None:
    settings.DEBUG = False
    out, err = io.StringIO(), io.StringIO()

    call_command("load_demo", stdout=out, stderr=err)

    # Neither admin/admin nor the players of the README (okey1234).
    assert not get_user_model().objects.exists()
    said = err.getvalue()
    assert "DEBUG is off: created no demo account" in said
    for username, _password, _is_superuser in DEMO_ACCOUNTS:
        assert repr(username) in said
    assert "createsuperuser" in said
    assert "created '" not in out.getvalue()
    # The demo tables are still there.
    assert out.getvalue().count("created table") == len(VARIANTS)


@pytest.mark.django_db
def test_load_demo_warns_about_a_demo_account_that_still_has_its_published_password(
    settings: Any,
) -> None:
    """Accounts made while DEBUG was on stay (load_demo never changes a password), but with
    DEBUG off it names those that still open with the README's password."""
    settings.DEBUG = True
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    users = get_user_model().objects
    for name in ("admin", "ayse", "mehmet"):
        user = users.get(username=name)
        user.set_password("a password of their own 42")
        user.save()
    settings.DEBUG = False
    err = io.StringIO()

    call_command("load_demo", stdout=io.StringIO(), stderr=err)

    warned = [line for line in err.getvalue().splitlines() if "published password" in line]
    assert len(warned) == 2, err.getvalue()
    assert "'can'" in warned[0] and "'deniz'" in warned[1]
    assert users.get(username="can").check_password("okey1234")  # left as it was


@pytest.mark.django_db
def test_load_demo_creates_the_admin_superuser_when_debug_is_on(
    settings: Any,
) -> None:
    settings.DEBUG = True

    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    assert admin.check_password("admin")


# ----------------------------------------------------------------------------- systemd
SYSTEMD = BASE_DIR / "deploy" / "systemd"


def unit_settings(path: Path) -> dict[str, list[str]]:
    """Each ``Key=value`` of a unit file, by key (a key may repeat, e.g. ExecStartPre)."""
    found: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith(("#", ";", "[")):
            key, value = line.split("=", 1)
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def environment_example() -> dict[str, str]:
    """deploy/systemd/okey.env.example as systemd reads it: NAME=value lines."""
    lines = (SYSTEMD / "okey.env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_the_systemd_unit_runs_serve_restarts_it_on_failure_and_stops_it_in_time() -> None:
    from games.management.commands.serve import Command as Serve

    unit = unit_settings(SYSTEMD / "okey.service")

    [start] = unit["ExecStart"]
    python, *command = start.split()
    assert python.endswith("/.venv/bin/python") and command[:2] == ["manage.py", "serve"]
    Serve().create_parser("manage.py", "serve").parse_args(command[2:])  # options it knows
    assert any("manage.py migrate" in pre for pre in unit["ExecStartPre"])
    assert unit["WorkingDirectory"] == [str(Path(python).parent.parent.parent)]
    assert unit["Restart"] == ["on-failure"]
    assert unit["EnvironmentFile"] == ["/etc/okey/okey.env"]
    # SIGTERM to serve alone (it stops its children), and time for its own stop timeout.
    assert unit["KillSignal"] == ["SIGTERM"] and unit["KillMode"] == ["mixed"]
    stop_timeout = Serve().create_parser("manage.py", "serve").parse_args([]).stop_timeout
    assert float(unit["TimeoutStopSec"][0]) > stop_timeout + 5


def test_the_systemd_environment_example_names_every_production_setting() -> None:
    example = environment_example()
    assert {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"} <= set(example)
    assert set(example) == set(production_env_from_the_readme())
    # Never a key anyone could copy: left empty, the site refuses to start.
    assert example["SECRET_KEY"] == ""
    assert example["DEBUG"] == "false"


@pytest.mark.slow
def test_the_systemd_environment_example_with_a_key_passes_check_deploy() -> None:
    check_deploy(clean_env(**{**environment_example(), "SECRET_KEY": secrets.token_urlsafe(50)}))


def test_systemd_reads_the_unit_without_a_complaint(tmp_path: Path) -> None:
    """`systemd-analyze verify` on the unit, its paths pointed at this checkout (it checks that
    the commands exist)."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed")
    text = (SYSTEMD / "okey.service").read_text()
    text = text.replace("/etc/okey/okey.env", str(SYSTEMD / "okey.env.example"))
    unit = tmp_path / "okey.service"
    unit.write_text(text.replace("/srv/okey", str(BASE_DIR)))

    result = subprocess.run(
        ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result
