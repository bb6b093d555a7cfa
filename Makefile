# Entry points of the collection. Each target does its own set-up on a fresh
# machine (venv, Python packages, Go builds) and is safe to repeat.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
CACHE := .cache
COLLECTIONS := $(CACHE)/collections
COLLECTION_LINK := $(COLLECTIONS)/ansible_collections/c5c3/cobaltcore
VENV_STAMP := $(VENV)/.stamp-$(shell cat requirements.txt requirements-dev.txt | sha256sum | cut -c1-16)
LAB := $(VENV)/bin/python -m regionlab
export PYTHONPATH := $(CURDIR)/lab
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export PATH := $(CURDIR)/$(VENV)/bin:$(CURDIR)/$(CACHE)/lab-bin:$(PATH)

.PHONY: help setup debian-packages lab-packages region test unit lint sanity integration molecule bench bench-mitogen lab-up lab-down lab-status lab-build lab-clean docs ee

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(VENV_STAMP): requirements.txt requirements-dev.txt
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements-dev.txt
	rm -f $(VENV)/.stamp-*
	touch $@

$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn $(CURDIR) $@

# Ansible runs as released: a venv of an earlier checkout loses the hook that patched it.
setup: $(VENV_STAMP) $(COLLECTION_LINK) ## venv, Python packages, collection path
	@rm -f $(VENV)/lib/python3*/site-packages/cobaltcore_ansiballz_bytecode.* $(VENV)/lib/python3*/site-packages/cobaltcore_module_zygote.* $(VENV)/.bytecode-hook-*

debian-packages: ## the Debian packages the tests need (tests/debian-packages.sh: apt-get only for what is missing)
	@tests/debian-packages.sh

lab-packages: ## the Debian packages the lab needs (memcached; tests/debian-packages.sh lab)
	@tests/debian-packages.sh lab

lab-build: lab-packages setup ## build kube-apiserver, etcd, kubectl, K-ORC, Flux from Go modules (only when pins change)
	$(LAB) build

lab-up: lab-packages setup ## start the local region (idempotent)
	$(LAB) up

lab-down: ## stop every lab process
	@if [ -x $(VENV)/bin/python ]; then $(LAB) down; fi

lab-status: setup ## what runs where
	$(LAB) status

lab-clean: lab-down ## stop the lab and remove its data (keeps built binaries)
	rm -rf .lab

region: lab-up ## the main job: the whole region playbook against the lab
	ansible-playbook -i inventories/lab playbooks/site.yml

# Each pytest run ends with its 15 slowest tests.
PYTEST_DURATIONS := --durations=15

unit: setup ## unit tests (no lab)
	pytest $(PYTEST_DURATIONS) tests/unit

lint: setup ## ansible-lint, production profile; antsibull-docs' lint of the plugins', roles' and guides' docs
	ansible-lint
	@# GIT_CEILING_DIRECTORIES: the linter copies dependencies with git ls-files, which skips the ignored .venv.
	GIT_CEILING_DIRECTORIES=$(CURDIR)/$(VENV) antsibull-docs lint-collection-docs --plugin-docs --skip-rstcheck .

sanity: setup ## ansible-test sanity on a copy of the collection
	tests/sanity.sh

# INTEGRATION_MARKERS: a pytest -m expression; tests/suite.sh runs "not lab_only", then the "lab_only" tests beside molecule.
integration: debian-packages lab-build ## integration tests against the lab (starts and stops it unless already up)
	pytest $(PYTEST_DURATIONS) $(if $(INTEGRATION_MARKERS),-m "$(INTEGRATION_MARKERS)") tests/integration

# MOLECULE_PART: all (default), default or others (tests/molecule.sh).
molecule: lab-build ## molecule scenarios on the lab (starts and stops it unless it runs already)
	@started=0; $(LAB) running || started=1; \
	$(LAB) up >/dev/null && tests/molecule.sh $(MOLECULE_PART); status=$$?; \
	if [ $$started = 1 ]; then $(LAB) down; fi; exit $$status

# One lab for both: molecule's converge finds the region the integration tests leave converged, and the lab
# starts once (it is stopped at the end only when this run started it).
test: debian-packages setup ## the whole test suite: unit, lint and sanity beside the lab's integration and molecule (tests/suite.sh)
	MAKE="$(MAKE)" tests/suite.sh

# The documentation site: antsibull-docs writes RST from the plugins' and roles' own docs (and the guides'
# stubs of docs/docsite), Sphinx renders it with the guides of docs/ (docs/sphinx/conf.py).
DOCS_WORK := $(CACHE)/docs
docs: setup ## the documentation site in docs/_site/index.html (antsibull-docs, Sphinx)
	rm -rf $(DOCS_WORK) docs/_site
	mkdir -p -m 700 $(DOCS_WORK)/rst
	ANSIBLE_COLLECTIONS_PATH=$(CURDIR)/$(COLLECTIONS) antsibull-docs --config-file docs/sphinx/antsibull-docs.cfg \
	  collection --use-current --squash-hierarchy --fail-on-error --dest-dir $(DOCS_WORK)/rst c5c3.cobaltcore
	# Each guide's stub (docs/docsite/rst) gives way to the guide itself, which myst-parser reads.
	for guide in docs/*.md; do name=$$(basename $$guide .md); \
	  test -f $(DOCS_WORK)/rst/docsite/$$name.rst || { echo "docs: $$guide has no stub in docs/docsite/rst"; exit 1; }; \
	  rm $(DOCS_WORK)/rst/docsite/$$name.rst; cp $$guide $(DOCS_WORK)/rst/docsite/; done
	sphinx-build -q -b html -c docs/sphinx $(DOCS_WORK)/rst docs/_site
	@echo "docs: docs/_site/index.html"

ee: setup ## the execution environment's build context in .cache/ee/context (ansible-builder create)
	rm -rf $(CACHE)/ee
	ansible-galaxy collection build --output-path $(CACHE)/ee/dist .
	ansible-builder create -f meta/execution-environment.yml --context $(CACHE)/ee/context

bench: lab-build ## benchmarks on stock ansible-core, as ratios to a ping task measured in the same run; the region first and no-op, the AWX job, phase 7 with 50 tenants vs 1, a release hop
	python tests/bench/apply_bench.py
	python tests/bench/region_bench.py
	BENCH_CONVERGED=1 python tests/bench/tenants_bench.py
	python tests/bench/upgrade_bench.py

# Mitogen is an accelerator a user may choose (docs/engine.md): installed apart from the venv, never a dependency.
MITOGEN_PATH ?= .cache/mitogen
bench-mitogen: lab-build ## the no-op region with Mitogen's strategy against stock ansible-core, side by side (on a converged lab)
	pip install --quiet --target $(MITOGEN_PATH) mitogen==0.3.54
	MITOGEN_PATH=$(MITOGEN_PATH) python tests/bench/mitogen_bench.py
