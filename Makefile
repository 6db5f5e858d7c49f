# gpudirect.gcp: the two commands are `make demo` and `make test`.
# Each one installs what it needs: Debian packages (apt-get, only when a
# command is missing) and a Python virtualenv in .venv.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# the newest supported ansible-core, for the static stages and one Molecule scenario
NEWEST := $(CURDIR)/build/venv-newest
NEWEST_STAMP := $(NEWEST)/.installed
# ansible-core 2.18 (AAP 2.7's second core), for the sanity and unit stages
CORE218 := $(CURDIR)/build/venv-218
CORE218_STAMP := $(CORE218)/.installed
# ansible-core 2.17, only for the template cache's tests (the middle core of its window)
CORE217 := $(CURDIR)/build/venv-217
CORE217_STAMP := $(CORE217)/.installed
CORE219 := $(CURDIR)/build/venv-219
CORE219_STAMP := $(CORE219)/.installed
CORE220 := $(CURDIR)/build/venv-220
CORE220_STAMP := $(CORE220)/.installed
NODES ?= 2
FAMILY ?= a3-mega
VARIANT ?= ubuntu
export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg

.PHONY: help deps system-deps venv venv-newest venv-218 venv-217 venv-219 venv-220 install test lint sanity units integration molecule demo demo-down build ee bench bench-diagnose bench-node-check bench-job-watch bench-pairing bench-scaling bench-text clean

help:
	@echo "make demo       run site.yml on a local sandbox cluster (NODES=$(NODES), FAMILY=$(FAMILY), VARIANT=$(VARIANT))"
	@echo "make demo-down  remove everything the sandbox made (IMAGES=1: the cached images too)"
	@echo "make test       lint, sanity, unit, integration and Molecule tests"
	@echo "make install    the user install: ansible and the collection in USER_VENV (no test toolchain)"
	@echo "make bench      inventory benchmark (prints figures and ratios)"
	@echo "make bench-diagnose  diagnose on 2- and 4-node sandboxes (prints figures and the ratio)"
	@echo "make bench-node-check  one node check (gpudirect-health) on a healthy sandbox node (prints figures)"
	@echo "make bench-job-watch  one job watch poll of a 512-rank job and 8 Inspector files (CPU, share of a core)"
	@echo "make bench-pairing   the pairwise fault search simulated on 8..1024 nodes (prints figures)"
	@echo "make bench-scaling   2 and 6 sandbox nodes: bare tasks, site.yml, its re-run and diagnose (CPU per node, ratios)"
	@echo "make bench-text      1 MB of hostile text through every report, metric and drain-reason writer (seconds each)"
	@echo "make ee         the AWX execution environment image from awx/ee (EE_BASE=community: public base; EE_BASE=de: the EDA decision environment; EE_COLLECTION_GIT=URL: collection from git)"

system-deps:
	@scripts/install-system-deps.sh

# requirements-dev.txt also brings the collections galaxy.yml depends on (PyPI's
# ansible); .venv gets the oldest supported ansible-core (on a Python 3.10 to 3.12,
# scripts/oldest-python.sh), build/venv-newest the newest
$(STAMP): requirements.txt requirements-user.txt requirements-dev.txt tests/requirements/oldest.txt
	@test -x $(BIN)/python || { PYTHON=$(PYTHON) scripts/install-system-deps.sh --venv && \
	  py=$$(scripts/oldest-python.sh) && "$$py" -m venv $(VENV); }
	$(BIN)/python -m pip install -q -U pip
	$(BIN)/python -m pip install -q -r requirements-dev.txt -c tests/requirements/oldest.txt
	@touch $(STAMP)

$(NEWEST_STAMP): requirements.txt requirements-user.txt requirements-dev.txt tests/requirements/newest.txt
	@test -x $(NEWEST)/bin/python || { py=$$(scripts/newest-python.sh) && "$$py" -m venv $(NEWEST); }
	$(NEWEST)/bin/python -m pip install -q -U pip
	$(NEWEST)/bin/python -m pip install -q -r requirements-dev.txt -c tests/requirements/newest.txt
	@touch $(NEWEST_STAMP)

venv: $(STAMP)

# The user install, without the development toolchain: a virtualenv with
# requirements-user.txt, and the collection built from this checkout and
# installed where ansible looks by default (run it from your own directory:
# this checkout's ansible.cfg points at the development link instead).
USER_VENV ?= $(HOME)/.local/share/gpudirect-gcp/venv
USER_COLLECTIONS ?= $(HOME)/.ansible/collections
install:
	@test -x $(USER_VENV)/bin/python || { PYTHON=$(PYTHON) scripts/install-system-deps.sh --venv && $(PYTHON) -m venv $(USER_VENV); }
	$(USER_VENV)/bin/python -m pip install -q -U pip
	$(USER_VENV)/bin/python -m pip install -q -r requirements-user.txt
	rm -rf build/dist-user && $(USER_VENV)/bin/ansible-galaxy collection build --force --output-path build/dist-user . >/dev/null
	cd "$(HOME)" && env -u ANSIBLE_CONFIG $(USER_VENV)/bin/ansible-galaxy collection install --no-deps --force \
	  -p $(USER_COLLECTIONS) \
	  $(CURDIR)/build/dist-user/gpudirect-gcp-*.tar.gz >/dev/null
	@echo "installed: . $(USER_VENV)/bin/activate, then from your own directory:" \
	  "ansible-playbook -i INVENTORY gpudirect.gcp.site"

venv-newest: $(NEWEST_STAMP)

# on the system's Python 3 (2.18 runs on 3.11 to 3.13)
$(CORE218_STAMP): requirements.txt requirements-user.txt requirements-dev.txt tests/requirements/core218.txt
	@test -x $(CORE218)/bin/python || $(PYTHON) -m venv $(CORE218)
	$(CORE218)/bin/python -m pip install -q -U pip
	$(CORE218)/bin/python -m pip install -q -r requirements-dev.txt -c tests/requirements/core218.txt
	@touch $(CORE218_STAMP)

venv-218: $(CORE218_STAMP)

# ansible-core and pytest alone, for the template cache's checks on each core of its window
# (tests/requirements/core2NN.txt): 2.17 on the Python .venv is made on (2.17 runs on 3.10 to
# 3.12; a Debian 13 system Python is 3.13), 2.19 and 2.20 on 3.12 or newer (venv-218 has a
# recipe of its own, above, which make prefers to this pattern)
$(CURDIR)/build/venv-2%/.installed: tests/requirements/core2%.txt
	@test -x $(@D)/bin/python || { py=$$(scripts/$(if $(filter 17,$*),oldest,newest)-python.sh) && "$$py" -m venv $(@D); }
	$(@D)/bin/python -m pip install -q -r $<
	@touch $@

venv-217: $(CORE217_STAMP)

venv-219: $(CORE219_STAMP)

venv-220: $(CORE220_STAMP)

deps: system-deps venv

test: deps venv-newest venv-218 venv-217 venv-219 venv-220
	@scripts/run-tests.sh

lint: venv
	@scripts/run-tests.sh lint

sanity: venv
	@scripts/run-tests.sh sanity

units: venv venv-newest venv-218 venv-217 venv-219 venv-220
	@scripts/run-tests.sh units

integration: deps venv-newest
	@scripts/run-tests.sh integration

molecule: deps venv-newest
	@scripts/run-tests.sh molecule

build: venv
	@scripts/build-collection.sh

demo: deps
	@scripts/demo.sh up $(NODES) $(FAMILY) $(VARIANT)

demo-down: venv
	@scripts/demo.sh down $(if $(IMAGES),--images)

# The image from awx/ee (its README.md): EE_BASE=aap (default, Red Hat login),
# community (public base) or de (the EDA controller's decision environment); the collection from its tarball, built here, or
# from EE_COLLECTION_GIT (at EE_COLLECTION_REF); EE_CONTEXT_ONLY=1 stops at the
# build context (build/ee-image/context). The sandbox's image: scripts/build-ee.sh.
ee: deps
	@$(BIN)/python awx/ee/prepare.py --base $(or $(EE_BASE),aap) \
	  $(if $(EE_COLLECTION_GIT),--git '$(EE_COLLECTION_GIT)') $(if $(EE_COLLECTION_REF),--ref '$(EE_COLLECTION_REF)') \
	  $(if $(EE_CONTEXT_ONLY),--create,--build $(if $(EE_TAG),--tag '$(EE_TAG)') \
	  --container-runtime $(or $(EE_RUNTIME),podman)) build/ee-image

bench: deps
	@benchmarks/inventory/run.sh

bench-diagnose: deps
	@benchmarks/diagnose/run.sh

bench-node-check: deps
	@benchmarks/node_check/run.sh

bench-scaling: deps venv-newest
	@scripts/link-collection.sh
	@$(BIN)/python benchmarks/scaling/bench.py --site --core oldest
	@$(BIN)/python benchmarks/scaling/bench.py --site --core newest

bench-job-watch: venv
	@scripts/link-collection.sh
	@$(BIN)/python benchmarks/job_watch/bench.py

bench-text: venv
	@benchmarks/text/run.sh

bench-pairing: venv
	@scripts/link-collection.sh
	@$(BIN)/python benchmarks/pairing/bench.py

clean:
	rm -rf build .cache tests/output
