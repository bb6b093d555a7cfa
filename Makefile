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

.PHONY: help setup region test unit lint sanity integration molecule bench lab-up lab-down lab-status lab-build lab-clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(VENV_STAMP): requirements.txt requirements-dev.txt
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements-dev.txt
	rm -f $(VENV)/.stamp-*
	touch $@

$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn $(CURDIR) $@

setup: $(VENV_STAMP) $(COLLECTION_LINK) ## venv, Python packages, collection path

lab-build: setup ## build kube-apiserver, etcd, kubectl, K-ORC, Flux from Go modules (only when pins change)
	$(LAB) build

lab-up: setup ## start the local region (idempotent)
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

lint: setup ## ansible-lint, production profile (ansible-doc of every plugin is a unit test)
	ansible-lint

sanity: setup ## ansible-test sanity on a copy of the collection
	tests/sanity.sh

integration: lab-build ## integration tests against the lab (starts and stops it unless already up)
	pytest $(PYTEST_DURATIONS) tests/integration

molecule: lab-build ## molecule scenarios on the lab (starts and stops it unless it runs already)
	@started=0; $(LAB) running || started=1; \
	$(LAB) up >/dev/null && molecule test --all; status=$$?; \
	if [ $$started = 1 ]; then $(LAB) down; fi; exit $$status

test: setup ## the whole test suite
	$(MAKE) unit
	$(MAKE) lint
	$(MAKE) sanity
	$(MAKE) integration
	$(MAKE) molecule

bench: lab-build ## benchmarks, ratios measured side by side; a no-op site.yml, the cost of a task, phase 7 with 10 tenants vs 1
	python tests/bench/apply_bench.py
	python tests/bench/region_bench.py
	BENCH_CONVERGED=1 python tests/bench/tenants_bench.py
