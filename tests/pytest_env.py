"""Test-only environment defaults, loaded as a pytest plugin (``-p tests.pytest_env``).

It runs before pytest-django imports the settings, which refuse to start without a
SECRET_KEY when DEBUG is off; tests run with DEBUG off, like production.

With DEBUG off the settings also redirect HTTP to HTTPS and mark the session and CSRF cookies
Secure. The test client and the live servers (pytest-django's, and the daphne of the
``daphne_live_server`` fixture, which inherits this environment) speak plain HTTP, so the suite
turns those off. tests/test_deploy.py checks the production settings without these defaults.
"""

import os

TEST_ENV_DEFAULTS = {
    "SECRET_KEY": "insecure-key-for-the-test-suite-only",
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    # Hands follow each other at once unless a test asks for the scoreboard's pause.
    "NEXT_HAND_PAUSE_SECONDS": "0",
    # Tests drive the clock themselves (clock.tick); the daphne_live_server turns it back on.
    "CLOCK_IN_SERVER": "false",
}

for _key, _value in TEST_ENV_DEFAULTS.items():
    os.environ.setdefault(_key, _value)

# The site hashes passwords with PBKDF2 (a million rounds: half a second on this machine), and
# the suite makes hundreds of users. Its processes (pytest's and the live servers') hash with
# MD5 instead and still check a PBKDF2 hash. tests/test_settings_env.py checks the site's own.
FAST_PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.MD5PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
