"""Django settings for the Okey platform.

Everything that differs between machines comes from the environment:

- ``DATABASE_URL``: any URL django-environ understands, e.g.
  ``postgres://postgres@127.0.0.1:5432/okey``. Unset: the SQLite file ``db.sqlite3``
  in the project folder, opened in IMMEDIATE transaction mode.
- ``REDIS_URL``: e.g. ``redis://127.0.0.1:6379/0``. Set: the channels-redis layer, which
  crosses processes. Unset: the in-memory layer (one process only).
- ``SECRET_KEY``: required unless ``DEBUG`` is on, where a development key is used.
- ``DEBUG``: ``true``/``false`` (default ``false``; ``make run`` turns it on).
- ``ALLOWED_HOSTS``, ``CSRF_TRUSTED_ORIGINS``: comma-separated lists.
- ``LOG_LEVEL``: level of the stdout log (default ``INFO``).
- ``DB_POOL`` (default on), ``DB_POOL_MIN`` (1), ``DB_POOL_MAX`` (20), ``DB_POOL_TIMEOUT``
  (10 s): the pool of PostgreSQL connections each process keeps.
- ``DB_PREPARED_STATEMENTS`` (default on): PostgreSQL binds the parameters and prepares the
  statements a connection runs often; off behind a PgBouncer that cannot keep them.
- ``CACHE_URL``: Django's cache (request rate limits), e.g. ``redis://127.0.0.1:6379/3``
  (Django's built-in RedisCache; never the channel layer's Redis database). Unset: a
  local-memory cache in each process.
- ``EMAIL_URL``: how mail is sent (password resets), e.g.
  ``smtp+tls://user:password@mail.example.org:587``. Default ``consolemail://``: printed on
  stdout (development).
- ``DEFAULT_FROM_EMAIL``: the sender of the site's mail (default ``okey@localhost``).
- HTTPS (see the README's production settings): ``SECURE_SSL_REDIRECT``,
  ``SESSION_COOKIE_SECURE`` and ``CSRF_COOKIE_SECURE`` default to on when ``DEBUG`` is off;
  ``SECURE_HSTS_SECONDS`` (default 0: off), ``SECURE_HSTS_INCLUDE_SUBDOMAINS`` and
  ``SECURE_HSTS_PRELOAD`` (default off) are opt-in, because browsers remember them;
  ``SECURE_PROXY_SSL_HEADER`` (e.g. ``HTTP_X_FORWARDED_PROTO,https``; default unset) only
  behind a proxy that always sets that header.
- ``PROXY_HEADERS``: ``true`` behind a proxy that sets X-Forwarded-For and X-Forwarded-Proto
  (daphne's ``--proxy-headers``); default ``false``.
"""

from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG = env.bool("DEBUG", default=False)

_DEV_SECRET_KEY = "django-insecure-development-only-never-use-in-production"
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set the SECRET_KEY environment variable, "
            "or DEBUG=true for local development only."
        )
    SECRET_KEY = _DEV_SECRET_KEY

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS ------------------------------------------------------------------------------------
# Secure by default outside development: redirect HTTP to HTTPS and send the session and CSRF
# cookies over HTTPS only. HSTS is opt-in: browsers keep it for SECURE_HSTS_SECONDS (and for
# every subdomain with INCLUDE_SUBDOMAINS; a preload list entry is hard to undo), so turn it on
# once the site is served over HTTPS for good. `manage.py check --deploy` lists what is missing.

SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
# Django's database sessions, with the read every page and socket makes written out.
SESSION_ENGINE = "accounts.sessions"
# First django-axes's, which refuses a client over the log-in limits (accounts.limits), then
# Django's ModelBackend with the user read every page and socket makes written out. (A
# session signed in before through "django.contrib.auth.backends.ModelBackend" reads as
# signed out: its player signs in again.)
AUTHENTICATION_BACKENDS = [
    "accounts.backends.LoginLimitsBackend",
    "accounts.backends.AccountBackend",
]
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
# Behind a TLS-terminating proxy, e.g. "HTTP_X_FORWARDED_PROTO,https": the request is HTTPS
# when the proxy sets that header to that value. Set it only when the proxy always sets (or
# strips) the header, or anyone can claim HTTPS.
_proxy_ssl_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_ssl_header:
    if len(_proxy_ssl_header) != 2 or not all(_proxy_ssl_header):
        raise ImproperlyConfigured(
            "SECURE_PROXY_SSL_HEADER is a header and its value, e.g. HTTP_X_FORWARDED_PROTO,https"
        )
    SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header[0], _proxy_ssl_header[1])
# Behind a proxy that sets X-Forwarded-For (replacing any the client sent) and
# X-Forwarded-Proto: `manage.py serve` and the Procfile then start daphne with
# --proxy-headers, so the log-in and request limits count each client's own address instead
# of the proxy's. Exactly "true" or "false": the Procfile's shell test reads the same value.
_proxy_headers = env.str("PROXY_HEADERS", default="false")
if _proxy_headers not in ("true", "false"):
    raise ImproperlyConfigured('PROXY_HEADERS is "true" or "false"')
PROXY_HEADERS = _proxy_headers == "true"

INSTALLED_APPS = [
    # daphne first: its runserver serves HTTP and WebSockets through asgi.py.
    "daphne",
    "channels",
    "django_htmx",
    "template_partials",
    "games",
    "leagues",
    "tournaments",
    "accounts",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    # Failed log-ins, counted in the database (accounts.limits).
    "axes",
    # The Content-Security-Policy header (CONTENT_SECURITY_POLICY below).
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A signed-in player's own language (their profile's, kept in the session) wins over the
    # cookie and Accept-Language that LocaleMiddleware read.
    "accounts.middleware.UserLanguageMiddleware",
    # A NUL in a path or a form: 400 before any view (okeysite.unreadable), in the reader's
    # language.
    "okeysite.unreadable.RefuseUnreadable",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "okeysite.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.account",
            ],
        },
    },
    {
        # The hot templates only (games/jinja.py says why): the table's live fragments and
        # their tiles, seats, piles and melds; the lobby's rows.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "games.jinja.environment"},
    },
]

WSGI_APPLICATION = "okeysite.wsgi.application"
ASGI_APPLICATION = "okeysite.asgi.application"

# Database ---------------------------------------------------------------------------------

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# Persistent connections pile up under ASGI (every request may run in another thread).
DATABASES["default"]["CONN_MAX_AGE"] = 0
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Take the write lock when a transaction starts, so that two writers never deadlock
    # on a lock upgrade ("database is locked") when the ASGI server runs them in threads.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"
# PostgreSQL: each process keeps a pool of open connections (psycopg_pool, through Django's
# "pool" option): a request or a socket's query borrows one instead of connecting anew (about
# 5 ms each). CONN_MAX_AGE stays 0, as Django requires with a pool. DB_POOL=false turns it off
# (e.g. behind PgBouncer in transaction mode); size it so that processes x DB_POOL_MAX stays
# below the server's max_connections.
DB_POOL = env.bool("DB_POOL", default=True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and DB_POOL:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env.int("DB_POOL_MIN", default=1),
        "max_size": env.int("DB_POOL_MAX", default=20),
        "timeout": env.float("DB_POOL_TIMEOUT", default=10.0),
    }

# PostgreSQL: bind parameters on the server, so that psycopg prepares a statement the fifth
# time a connection runs it and the server stops planning it anew (every move and every frame
# run the same few statements, whose planning cost more than running them:
# docs/PERFORMANCE.md). Behind PgBouncer in transaction mode, older than 1.21 or without
# max_prepared_statements, set DB_PREPARED_STATEMENTS=false.
DB_PREPARED_STATEMENTS = env.bool("DB_PREPARED_STATEMENTS", default=True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and DB_PREPARED_STATEMENTS:
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        server_side_binding=True, prepare_threshold=5
    )

# PostgreSQL: a table socket's read after a change runs on the server's event loop, on an
# asynchronous connection from a pool of its own per process (games.live.loop_reads), instead of
# waiting for the GIL in a thread. Count DB_LOOP_POOL_MAX per process beside DB_POOL_MAX.
DB_LOOP_READS = env.bool("DB_LOOP_READS", default=True)
DB_LOOP_POOL_MAX = env.int("DB_LOOP_POOL_MAX", default=4)

# In an ASGI server, messages after commit go out on the server's own event loop, not from a
# publishing thread that would wait for the GIL after each Redis round trip
# (games.actions.broadcast).
BROADCAST_ON_SERVER_LOOP = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _redis_database(url: str) -> tuple[str, int, str] | None:
    """(host, port, database) of a redis:// or rediss:// URL; None for anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return None
    database = parts.path.strip("/") or parse_qs(parts.query).get("db", ["0"])[0] or "0"
    return (parts.hostname or "localhost", parts.port or 6379, database)


# Channels ---------------------------------------------------------------------------------

REDIS_URL = env.str("REDIS_URL", default="")
# The layer waits for messages with a blocking pop (BZPOPMIN) of up to
# RedisChannelLayer.brpop_timeout (5 s). The socket's read timeout must be longer, or every
# quiet socket dies after 5 s with redis.exceptions.TimeoutError (redis-py 8 made 5 s the
# default: django/channels_redis#422, redis/redis-py#4091). Long enough for the pop, still
# finite so that a dead Redis connection is noticed.
REDIS_SOCKET_TIMEOUT = 30.0
# channels_redis's layer, with one reader task per process, so that a closing socket never
# takes another socket's message with it (see the module). bench/load.py --layer pubsub sets
# channels_redis's RedisPubSubChannelLayer instead, to compare them (docs/PERFORMANCE.md).
SITE_LAYER = "okeysite.channel_layers.RedisChannelLayer"
PUBSUB_LAYER = "channels_redis.pubsub.RedisPubSubChannelLayer"
CHANNEL_LAYER_BACKEND = env.str("CHANNEL_LAYER_BACKEND", default=SITE_LAYER)
if CHANNEL_LAYER_BACKEND not in (SITE_LAYER, PUBSUB_LAYER):
    raise ImproperlyConfigured(f"CHANNEL_LAYER_BACKEND is {SITE_LAYER} or {PUBSUB_LAYER}")
if REDIS_URL and CHANNEL_LAYER_BACKEND == PUBSUB_LAYER:
    # Its subscriber waits on its connection without a timeout of its own.
    CHANNEL_LAYERS = {
        "default": {"BACKEND": PUBSUB_LAYER, "CONFIG": {"hosts": [{"address": REDIS_URL}]}}
    }
elif REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": SITE_LAYER,
            "CONFIG": {
                # Each host dict goes to redis.asyncio.ConnectionPool.from_url(address, **rest);
                # query parameters in REDIS_URL (e.g. ?socket_timeout=) override these.
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": REDIS_SOCKET_TIMEOUT,
                        "socket_connect_timeout": 5.0,
                        "socket_keepalive": True,
                    }
                ],
            },
        },
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Games ------------------------------------------------------------------------------------

# Seconds the end-of-hand scoreboard shows before the next hand is dealt (every player
# pressing "ready" deals it sooner).
NEXT_HAND_PAUSE_SECONDS = env.int("NEXT_HAND_PAUSE_SECONDS", default=8)
# Seconds a table formed by "Play now" waits for more people before bots take its empty
# seats and the match starts.
QUICK_PLAY_WAIT_SECONDS = env.int("QUICK_PLAY_WAIT_SECONDS", default=15)

# The clock (games.clock: bots, move timers, away seats, the next hand). Without Redis the
# in-memory channel layer reaches only the server's own sockets, so the clock runs inside the
# ASGI server (games.live.server_tasks); with Redis it runs as `manage.py run_clock` workers.
CLOCK_IN_SERVER = env.bool("CLOCK_IN_SERVER", default=not REDIS_URL)
CLOCK_INTERVAL_SECONDS = env.float("CLOCK_INTERVAL_SECONDS", default=0.25)
# While this file exists the clock plays nothing (games.clock.paused): maintenance, and the
# test suite's live server between the tests that use it.
CLOCK_PAUSE_FILE = env.str("CLOCK_PAUSE_FILE", default="")
# Seconds a bot waits before its turn (so that people can follow), and before a player with
# no open socket is marked away (a bot then plays for them until they come back).
BOT_DELAY_SECONDS = env.float("BOT_DELAY_SECONDS", default=0.8)
# What the expert bot may spend on one decision, in milliseconds of this machine's search. It
# thinks inside the pause above (the clock starts it that much earlier), never after it.
BOT_THINK_MS = env.float("BOT_THINK_MS", default=80.0)
AWAY_GRACE_SECONDS = env.int("AWAY_GRACE_SECONDS", default=20)

# Content-Security-Policy ------------------------------------------------------------------
# Scripts, styles, images and sockets only from this site: no inline script, style attribute or
# <style> element, no eval (the templates and fragments have none; tests/pages/test_csp.py checks
# every page and socket frame), so markup that slips into a page cannot run or restyle it.
# connect-src 'self' covers the site's own ws:/wss: sockets (CSP Level 3); a bare ws: or
# wss: would allow any host. img-src data: for the empty favicon (base.html).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Authentication ---------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Log-in limits: django-axes with the counts of accounts.limits.LoginLimits, 15 minutes after
# the last counted failure. The log-in forms show the lock-out themselves
# (accounts.forms.LoginLimitsMixin, the admin's included), so axes's middleware, which would
# replace the page with a bare one, is left out.
AXES_HANDLER = "accounts.limits.LoginLimits"
AXES_FAILURE_LIMIT = 5  # one account name at one address
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_USERNAME_CALLABLE = "accounts.limits.attempted_account"
AXES_CLIENT_IP_CALLABLE = "accounts.limits.client_address"
# What a success resets: that account's failures at that address, not the address's others.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
SILENCED_SYSTEM_CHECKS = ["axes.W002"]  # the middleware, left out on purpose (above)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# Requests --------------------------------------------------------------------------------
# No form or payload of the site comes near this (a move or chat line is under 8 KiB, the
# admin's largest forms a few KiB): a larger body is refused (400) before it is read.
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024

# Cache ------------------------------------------------------------------------------------
# Counts the request rates (accounts.limits: guests, sign-ups, password-reset mails). Shared by
# every process with CACHE_URL; without it each process counts on its own.

CACHE_URL = env.str("CACHE_URL", default="")
if CACHE_URL:
    CACHES = {"default": env.cache_url_config(CACHE_URL)}
    _layer_db = _redis_database(REDIS_URL)
    if _layer_db is not None and _layer_db == _redis_database(
        str(CACHES["default"].get("LOCATION") or "")
    ):
        # Clearing the cache (FLUSHDB) would wipe the channel layer's messages.
        raise ImproperlyConfigured(
            "CACHE_URL and REDIS_URL name the same Redis database: give the cache its own, "
            "e.g. redis://127.0.0.1:6379/3"
        )
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "okey"}
    }

# E-mail -----------------------------------------------------------------------------------
# Password resets. Development: printed on stdout (consolemail://).

_email = env.email_url("EMAIL_URL", default="consolemail://")
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = _email.get("EMAIL_PORT") or 25
EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = bool(_email.get("EMAIL_USE_TLS", False))
EMAIL_USE_SSL = bool(_email.get("EMAIL_USE_SSL", False))
if _email.get("EMAIL_FILE_PATH"):
    EMAIL_FILE_PATH = _email["EMAIL_FILE_PATH"]
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="okey@localhost")

# Internationalisation ---------------------------------------------------------------------

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", _("English")),
    ("tr", _("Turkish")),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Static files -----------------------------------------------------------------------------
# Our own files live in static/; the front-end libraries are served straight from
# node_modules (installed by npm from package-lock.json), so no third-party code is committed.

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
_NODE_MODULES = BASE_DIR / "node_modules"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    ("vendor/htmx", _NODE_MODULES / "htmx.org" / "dist"),
    ("vendor/htmx-ext-ws", _NODE_MODULES / "htmx-ext-ws" / "dist"),
    ("vendor/sortablejs", _NODE_MODULES / "sortablejs"),
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Compressed, not hashed: pages render even where collectstatic has not run (tests).
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# WhiteNoise serves straight from the finders while DEBUG is on (no collectstatic needed),
# and from STATIC_ROOT otherwise.
WHITENOISE_USE_FINDERS = DEBUG

# Logging ----------------------------------------------------------------------------------

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "stdout": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": "plain",
        },
    },
    "filters": {"request_too_big": {"()": "okeysite.log_filters.RequestTooBig"}},
    "root": {"handlers": ["stdout"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["stdout"], "level": LOG_LEVEL, "propagate": False},
        # A body refused for its size: one warning with the size, not an error's traceback.
        "django.security.RequestDataTooBig": {
            "handlers": ["stdout"],
            "level": LOG_LEVEL,
            "filters": ["request_too_big"],
            "propagate": False,
        },
    },
}
