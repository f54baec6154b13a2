"""Deployment safety: the README's production settings pass `check --deploy` with no warnings,
and the demo loader makes no admin/admin superuser unless DEBUG is on."""

import io
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

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


def test_the_documented_production_settings_pass_check_deploy() -> None:
    production = production_env_from_the_readme()
    assert production["DEBUG"] == "false"
    # Nothing of the test suite's own environment (its key, plain-HTTP defaults) leaks in.
    assert set(TEST_ENV_DEFAULTS) <= set(SETTINGS_ENV)
    env = clean_env(**production)

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
    assert "WARNING" not in output and "?: (" not in output, output


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
def test_load_demo_refuses_the_admin_superuser_when_debug_is_off(
    settings: Any,
) -> None:
    settings.DEBUG = False
    out, err = io.StringIO(), io.StringIO()

    call_command("load_demo", stdout=out, stderr=err)

    users = get_user_model().objects
    assert not users.filter(username="admin").exists()
    assert not users.filter(is_superuser=True).exists()
    assert "refused to create the superuser 'admin'" in err.getvalue()
    assert "createsuperuser" in err.getvalue()
    # The rest of the demo data is still there.
    assert set(users.values_list("username", flat=True)) == {"ayse", "mehmet", "can", "deniz"}
    assert "created table" in out.getvalue()


@pytest.mark.django_db
def test_load_demo_creates_the_admin_superuser_when_debug_is_on(
    settings: Any,
) -> None:
    settings.DEBUG = True

    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    assert admin.check_password("admin")
