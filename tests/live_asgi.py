"""The ASGI application that the ``daphne_live_server`` fixture's daphne process serves.

The site's own application (okeysite.asgi: HTTP and WebSockets), on the test database the
fixture names in ``OKEY_LIVE_DATABASE_NAME``, with static files served from the finders as
Django's WSGI test server does (tests never run collectstatic). Not a test module.
"""

import os

import django
from django.conf import settings

from tests import workers
from tests.pytest_env import FAST_PASSWORD_HASHERS

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "okeysite.settings")
# Under pytest-xdist: the channel layer and cache keys of the worker that started this server.
workers.isolate(settings)
settings.PASSWORD_HASHERS = FAST_PASSWORD_HASHERS
django.setup()
# Before any connection opens: the test database (a file for SQLite), not the real one.
settings.DATABASES["default"]["NAME"] = os.environ["OKEY_LIVE_DATABASE_NAME"]

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from okeysite.asgi import application as site_application  # noqa: E402

application = ASGIStaticFilesHandler(site_application)
