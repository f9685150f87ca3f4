# The two commands of the README: `make site` and `make test`. Both set up .venv/ first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
HOST ?= 127.0.0.1
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export NO_MKDOCS_2_WARNING := 1
PORT ?= 8000

.PHONY: site test serve serve-full validate schema bench clean browser

# Re-install whenever the project's dependencies change.
$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11 or newer is needed")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --constraint constraints.txt --editable '.[test]'
	@touch $(STAMP)

site: $(STAMP)
	$(VENV)/bin/mkdocs build --strict --site-dir site
	@echo "Site built in site/ (open site/index.html, or run 'make serve')."

test: $(STAMP) browser
	$(PY) -m pytest

# The browser tests drive Debian's Chromium and the HTML check runs the Nu validator on
# Java: install them once when they are missing.
browser:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v java >/dev/null 2>&1 || missing="$$missing default-jre-headless"; \
	if [ -n "$$missing" ]; then \
		echo "Installing$$missing for the browser and HTML tests..."; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

serve: $(STAMP)
	$(VENV)/bin/mkdocs serve --dirty --no-strict --dev-addr $(HOST):$(PORT)

# The same preview, rebuilding every page on each change (slower; navigation and search always whole).
serve-full: $(STAMP)
	$(VENV)/bin/mkdocs serve --dev-addr $(HOST):$(PORT)

validate: $(STAMP)
	$(PY) -m generator validate entries

schema: $(STAMP)
	$(PY) -m generator schema > schema/entry.schema.json

# Benchmarks (several minutes): validation, builds at 200/2,000/10,000 entries, diagnosis.
bench: $(STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf site .pytest_cache .hypothesis test-artifacts
