"""Test-only environment defaults, loaded as a pytest plugin (``-p tests.pytest_env``).

It runs before pytest-django imports the settings, which refuse to start without a
SECRET_KEY when DEBUG is off; tests run with DEBUG off, like production.
"""

import os

os.environ.setdefault("SECRET_KEY", "insecure-key-for-the-test-suite-only")
