"""WSGI entry point (plain HTTP only; the site itself runs under ASGI with daphne)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "okeysite.settings")

application = get_wsgi_application()
