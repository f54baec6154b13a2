# Two commands: `make run` serves the site on http://127.0.0.1:8000, `make test` checks it.
# Both install what they need into .venv and node_modules first, and skip that when nothing
# changed since the last install.

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
MANAGE := $(PY) manage.py
HOST ?= 127.0.0.1
PORT ?= 8000

RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
NODE_STAMP := node_modules/.installed

# The clock (bots, move timers, away seats, the next hand). Without REDIS_URL it runs inside
# daphne (games/live/server_tasks.py); with REDIS_URL `make run` starts a run_clock worker beside
# daphne and stops it when daphne stops: Ctrl-C reaches daphne (the terminal signals the whole
# foreground group) but not the worker (the shell makes a job started with `&` ignore SIGINT),
# so the trap stops it.
ifneq ($(strip $(REDIS_URL)),)
WORKER ?= $(MANAGE) run_clock
endif

.PHONY: run serve test test-fast install install-dev chromium lint messages clean

run: export DEBUG ?= true
run: install
	$(MANAGE) migrate --noinput
	$(MANAGE) load_demo
	@echo "Serving on http://$(HOST):$(PORT)/ (demo accounts: see README.md)"
ifeq ($(strip $(WORKER)),)
	$(PY) -m daphne -b $(HOST) -p $(PORT) okeysite.asgi:application
else
	$(WORKER) & worker=$$!; \
	trap 'kill $$worker 2>/dev/null || true' EXIT INT TERM; \
	$(PY) -m daphne -b $(HOST) -p $(PORT) okeysite.asgi:application
endif

# Production: PROCESSES daphne processes on PORT, PORT+1, ... and the clock worker, on the
# PostgreSQL and Redis of DATABASE_URL and REDIS_URL (README: "Production settings"). serve
# restarts a crashed process alone; under systemd, deploy/systemd/okey.service runs it.
PROCESSES ?= 2
serve: install
	$(MANAGE) migrate --noinput
	$(MANAGE) collectstatic --noinput
	$(MANAGE) serve --processes $(PROCESSES) --host $(HOST) --port $(PORT)

# pytest runs the suite in TEST_WORKERS processes (pytest-xdist), one per core and one more:
# each has its own test database, daphne, Chromium and Redis keys (tests/workers.py), and the
# extra worker runs while a test of another waits on its server or browser; four on two cores
# only queued on the CPU (docs/PERFORMANCE.md, "The test suite": 2, 3 and 4 workers measured).
# A worker that is free takes the next test (--dist load --maxschedchunk 1), and the longest
# tests come first (tests/conftest.py, LONG_FIRST), so no long test holds the run up at its
# end. TEST_WORKERS=0 runs it serially in one process.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
# mypy --strict checks the pure Python: the engine, a tournament's seating and standings.
TYPED := games/engine tournaments/seating.py tournaments/standings.py
test: install-dev chromium
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(BIN)/lint-imports
	$(PY) -m mypy --strict $(TYPED)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist load --maxschedchunk 1

# The edit-test loop: ruff and the tests that need no browser and no server process and take
# under a second or so (the marks browser and server follow from the fixtures a test uses,
# tests/conftest.py; slow is written on the sweeps over whole hands and the windows of
# seconds). make test runs them all.
test-fast: install-dev
	$(PY) -m ruff check .
	$(PY) -m pytest -n $(TEST_WORKERS) --dist load --maxschedchunk 1 -q -m "not browser and not server and not slow"

lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(BIN)/lint-imports

# Compiled translations are build output: made from the committed .po files (GNU gettext):
# django.po for templates and Python, djangojs.po for the scripts (served at /jsi18n/).
MO_FILES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/django.po locale/*/LC_MESSAGES/djangojs.po))

install: $(RUN_STAMP) $(NODE_STAMP) $(MO_FILES)

install-dev: $(DEV_STAMP) $(NODE_STAMP) $(MO_FILES)

# After adding or changing a string: refresh the catalogues, translate the new entries in
# locale/tr/LC_MESSAGES/*.po, and `make test` (tests/test_translations.py fails on a string
# missing from a catalogue, untranslated or fuzzy).
MESSAGES_IGNORE := -i node_modules -i .venv -i staticfiles -i tests -i bench -i test-artifacts
messages: install-dev
	$(PY) manage.py makemessages -l tr --no-obsolete $(MESSAGES_IGNORE)
	$(PY) manage.py makemessages -d djangojs -l tr --no-obsolete $(MESSAGES_IGNORE)

%.mo: %.po
	@if command -v msgfmt >/dev/null 2>&1; then msgfmt --check -o $@ $<; \
	else echo "msgfmt (GNU gettext) is missing: pages stay in English"; fi

$(PY):
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): requirements.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@ $(RUN_STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# Debian's Chromium for the browser tests. Installed when missing and we are root with
# apt-get; otherwise the browser tests skip loudly (and fail under CI=true).
chromium:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "Installing Debian's chromium for the browser tests"; \
		( apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium ) \
			|| echo "WARNING: could not install chromium; the browser tests will skip (or fail under CI=true)"; \
	else \
		echo "WARNING: /usr/bin/chromium is missing and cannot be installed here (need root and apt-get);"; \
		echo "WARNING: the browser tests will skip (or fail under CI=true)"; \
	fi

clean:
	rm -rf $(VENV) node_modules staticfiles .pytest_cache .ruff_cache .mypy_cache .hypothesis
