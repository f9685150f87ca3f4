# The two commands of the README: `make site` and `make test`. Both set up .venv/ first.
PYTHON ?= python3
# The oldest Python the package installs on (`mlfail`, the Python API, validation), read from
# pyproject.toml's requires-python. The site, test and lint tools need 3.11 (mkdocs-material,
# Markdown, hypothesis and pytest-randomly require it; before 3.11.5, as Debian 12's 3.11.2,
# constraints.txt picks older pymdown-extensions and soupsieve).
MIN_PYTHON := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\)"$$/\1/p' pyproject.toml)
TOOLS_MIN_PYTHON := 3.11
NEED ?= $(MIN_PYTHON)
NEEDED_FOR ?=
VENV := .venv
SITE_DIR := site
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
CORE_STAMP := $(VENV)/.core-stamp
HOST ?= 127.0.0.1
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export NO_MKDOCS_2_WARNING := 1
PORT ?= 8000

.PHONY: site site-zensical test test-all-pages lint serve serve-full validate schema bench produce clean browser check-pythons hooks venv test-package check-package-pythons

# Re-install whenever the project's dependencies change. $(STAMP): everything (site, tests, lint);
# $(CORE_STAMP): only what validating entries needs, for `make validate` and the commit hook.
# The editable install is needed for the MkDocs plugin's entry point. setuptools notes that such an
# install may let same-named folders of the working directory win imports: here that is the
# point (a checkout reads its own entries/ and templates/, generator/resources.py), so that one
# notice is silenced, nothing else.
$(STAMP): pyproject.toml constraints.txt
	@$(MAKE) --no-print-directory venv NEED=$(TOOLS_MIN_PYTHON) NEEDED_FOR="for the site, test and lint tools (the package alone needs $(MIN_PYTHON))"
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet --constraint constraints.txt --editable '.[site,zensical,test,lint]'
	@touch $(STAMP) $(CORE_STAMP)

# Validating needs only the package's own dependencies: `python -m generator` runs from this
# checkout, so the package itself is not built or installed. The list is read with tomllib (3.11), or
# before 3.11 with the copy of tomli that pip carries, one requirement a line (markers have spaces).
$(CORE_STAMP): pyproject.toml constraints.txt
	@$(MAKE) --no-print-directory venv
	$(PY) -c 'import sys; tomllib = __import__("tomllib" if sys.version_info >= (3, 11) else "pip._vendor.tomli", fromlist=["load"]); print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' > $(VENV)/core-requirements.txt
	$(PY) -m pip install --quiet --constraint constraints.txt --requirement $(VENV)/core-requirements.txt
	@touch $(CORE_STAMP)

venv:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "$(PYTHON) not found: install Python $(NEED) or newer, or run make PYTHON=/path/to/python3"; exit 1; }
	@$(PYTHON) -c 'import sys; need = tuple(map(int, "$(NEED)".split("."))); v = sys.version_info[:3]; 	sys.exit(None if v >= need else "Python $(NEED) or newer is needed$(if $(NEEDED_FOR), $(NEEDED_FOR)), but $(PYTHON) is %d.%d.%d: install a newer one (python.org, pyenv, uv python install, or your distribution'"'"'s python3.12) and run: make PYTHON=python3.12 ..." % v)'
	@[ -x $(PY) ] || { $(PYTHON) -m venv $(VENV) && $(PY) -m pip install --quiet --upgrade pip; }

site: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir $(SITE_DIR)
	@echo "Site built in $(SITE_DIR)/ (open $(SITE_DIR)/index.html, or run 'make serve')."

# The same site built by Zensical, Material's successor, which runs no MkDocs plugin: the generated
# pages and docs/ are written into build/zensical-docs, Zensical builds them with zensical.yml (which
# inherits mkdocs.yml), and the site is finished as the plugin finishes it (search index, 404 page).
site-zensical: $(STAMP)
	$(PY) -m generator generate --out build/zensical-docs --with-docs docs
	$(VENV)/bin/zensical build --clean -f zensical.yml
	$(PY) -m generator finish-site site-zensical
	@echo "Site built by Zensical in site-zensical/."

# Build the site with every interpreter found among python3.11, python3.12 and python3.13, each in
# a fresh virtual environment of its own, so a version problem shows before users meet it.
check-pythons:
	@found=""; for py in python3.11 python3.12 python3.13; do 		$$py -c 'import sys' >/dev/null 2>&1 || continue; 		found="$$found $$py"; dir=$$(mktemp -d); echo "== $$py: $$($$py -V 2>&1)"; 		if $(MAKE) --no-print-directory site PYTHON=$$py VENV=$$dir/venv SITE_DIR=$$dir/site >$$dir/log 2>&1; 		then echo "   site built"; rm -rf $$dir; 		else tail -5 $$dir/log; echo "   FAILED with $$py (full log: $$dir/log)"; exit 1; fi; 	done; 	[ -n "$$found" ] || { echo "none of python3.11, python3.12, python3.13 runs here"; exit 1; }

# The package alone (`mlfail`, the Python API, validation) on any Python it supports, 3.9 and newer:
# `pip install .` (not editable) with the pinned versions, plus pytest and hypothesis, into a fresh
# venv in a temporary folder, then the fast layer, run from that folder so that the installed copy is
# imported. Tests that need the site toolchain skip themselves. make test-package PYTHON=python3.9
PACKAGE_TESTS ?= -m "not browser and not build"
test-package:
	@dir=$$(mktemp -d); \
	$(MAKE) --no-print-directory venv VENV=$$dir/venv || { rm -rf $$dir; exit 1; }; \
	echo "== $(PYTHON): $$($$dir/venv/bin/python -V 2>&1), in $$dir/venv"; \
	$$dir/venv/bin/python -m pip install --quiet --constraint constraints.txt . pytest hypothesis \
		&& (cd $$dir && $$dir/venv/bin/python -m pytest -p no:cacheprovider --import-mode=importlib \
			--rootdir $(CURDIR) $(PACKAGE_TESTS) $(PYTEST_ARGS) $(CURDIR)/tests); \
	status=$$?; rm -rf $$dir; exit $$status

# test-package with each of python3.9 ... python3.14 on PATH or among pyenv's versions; one that is
# missing is named and skipped. Prints each one's pytest summary (the end of its log when it fails).
PACKAGE_PYTHONS ?= 3.9 3.10 3.11 3.12 3.13 3.14
check-package-pythons:
	@failed=""; for v in $(PACKAGE_PYTHONS); do \
		py=python$$v; $$py -c 'import sys' >/dev/null 2>&1 || \
			py=$$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$$v.*/bin/python$$v 2>/dev/null | sort -V | tail -1); \
		if [ -z "$$py" ] || ! $$py -c 'import sys' >/dev/null 2>&1; then echo "== python$$v: not found, skipped"; continue; fi; \
		log=$$(mktemp); \
		if $(MAKE) --no-print-directory test-package PYTHON=$$py >$$log 2>&1; \
		then echo "== python$$v ($$py): $$(tail -1 $$log)"; rm -f $$log; \
		else echo "== python$$v ($$py): FAILED, the end of its log ($$log):"; tail -20 $$log; failed="$$failed $$v"; fi; \
	done; \
	[ -z "$$failed" ] || { echo "the package's tests failed on Python$$failed"; exit 1; }

# The suite runs on every core (pytest-xdist) in a random order (pytest-randomly, which prints its
# seed: `make test PYTEST_ARGS="-p randomly --randomly-seed=N"` repeats an order). The browser
# checks of every page sample the entry pages; `make test-all-pages` checks them all (releases).
TEST_WORKERS ?= auto
PYTEST_ARGS ?=
test: $(STAMP) browser
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

test-all-pages: $(STAMP) browser
	ALL_PAGES=1 $(PY) -m pytest -n $(TEST_WORKERS) tests/test_browser_pages.py $(PYTEST_ARGS)

# The browser tests drive Chromium or Chrome ($$BROWSER_PATH, else Debian's /usr/bin/chromium, else
# google-chrome or chromium on PATH: tests/browser.py) and the HTML check runs the Nu validator on
# Java. What is missing is installed from apt where apt has it (Debian's chromium and
# default-jre-headless); elsewhere one line says what to install.
BROWSERS_ON_PATH := google-chrome google-chrome-stable chromium chromium-browser
browser:
	@missing=""; \
	if [ -z "$$BROWSER_PATH" ] && [ ! -x /usr/bin/chromium ] && \
		! (for b in $(BROWSERS_ON_PATH); do command -v $$b >/dev/null 2>&1 && exit 0; done; exit 1); then \
		missing="$$missing chromium"; fi; \
	command -v java >/dev/null 2>&1 || missing="$$missing default-jre-headless"; \
	if [ -n "$$missing" ]; then \
		if command -v apt-get >/dev/null 2>&1 && [ -r /etc/debian_version ] && ! grep -qi ubuntu /etc/os-release 2>/dev/null; then \
			echo "Installing$$missing for the browser and HTML tests..."; \
			$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "The browser and HTML tests need$$missing: install Chromium or Google Chrome (or set BROWSER_PATH) and a Java runtime; they are skipped without them."; \
		fi; \
	fi

serve: $(STAMP)
	$(VENV)/bin/mkdocs serve --dirty --no-strict --dev-addr $(HOST):$(PORT)

# The same preview, rebuilding every page on each change (slower; navigation and search always whole).
serve-full: $(STAMP)
	$(VENV)/bin/mkdocs serve --dev-addr $(HOST):$(PORT)

# Lint: ruff (rules and formatting) and mypy, configured in pyproject.toml.
lint: $(STAMP)
	$(VENV)/bin/ruff check generator tests bench
	$(VENV)/bin/ruff format --check generator tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-actions action.yml

validate: $(CORE_STAMP)
	$(PY) -m generator validate entries

# The commit hook of .githooks/: validates staged entries and lints staged code with .venv/'s tools.
hooks: $(CORE_STAMP)
	git config core.hooksPath .githooks
	@echo "pre-commit hook installed (.githooks/pre-commit); 'git config --unset core.hooksPath' removes it."

schema: $(STAMP)
	$(PY) -m generator schema > schema/entry.schema.json

# Benchmarks (several minutes): validation, builds at 200/2,000/10,000 entries, diagnosis.
bench: $(STAMP)
	$(PY) bench/run_all.py

# The logs of tests/fixtures/diagnose/produced/, run again with the releases pinned in
# bench/produce-requirements.txt (installed into .venv-produce/ on the first run, on
# $(PRODUCE_PYTHON)): checks that each committed log still reads as those releases print it.
# Not part of `make test` (it installs torch and takes a while). One case, its log rewritten:
# make produce PRODUCE_ARGS="--only NAME --write"
PRODUCE_PYTHON ?= python3.11
PRODUCE_ARGS ?=
produce: $(CORE_STAMP)
	$(PY) bench/produce.py --base-python $(PRODUCE_PYTHON) $(PRODUCE_ARGS)

clean:
	rm -rf site .pytest_cache .hypothesis test-artifacts
