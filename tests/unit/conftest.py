# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ansible_collections.c5c3.cobaltcore.

The collection's code imports itself by its collection path (Ansible requires
it). From a plain checkout that path is a symlink under .cache/collections
(git-ignored), the same one the Makefile creates for ansible-playbook.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

import pytest
import yaml
from hypothesis.configuration import set_hypothesis_home_dir

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _collections_root():
    """The directory that holds ansible_collections/ for this checkout."""
    parts = REPO.split(os.sep)
    if parts[-3:-2] == ["ansible_collections"]:
        # Already inside a collection tree (ansible-test, an installed copy).
        return os.sep.join(parts[:-3])
    root = os.path.join(REPO, ".cache", "collections")
    link = os.path.join(root, "ansible_collections", "c5c3", "cobaltcore")
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(REPO, link)
    return root


_ROOT = _collections_root()
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
INVENTORIES = os.path.join(REPO, "inventories")

# Hypothesis keeps its example database and caches under the git-ignored .cache.
set_hypothesis_home_dir(os.path.join(REPO, ".cache", "hypothesis"))

# .ci/run sets it: under CI a test that lacks what it needs fails instead of skipping.
CI_VARIABLE = "COBALTCORE_CI"


def in_ci():
    return os.environ.get(CI_VARIABLE, "") not in ("", "0")


def _go_escape(path):
    """A module path as the module cache spells it (an upper-case letter becomes '!' + lower case)."""
    return "".join("!" + c.lower() if c.isupper() else c for c in path)


def _go_download(module, version):
    """The module's directory after `go mod download` (outside any go.mod, so nothing is edited)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(["go", "mod", "download", "-json", "%s@%s" % (module, version)], cwd=scratch,
                             capture_output=True, text=True, timeout=900, check=False)
    try:
        found = json.loads(out.stdout)
    except ValueError:
        found = {}
    if out.returncode != 0 or not found.get("Dir"):
        raise RuntimeError(found.get("Error") or out.stderr.strip() or "go mod download exited %d" % out.returncode)
    return found["Dir"]


def go_module_dir(module, version):
    """The extracted directory of a Go module that the lab pins (lab/crds/upstream.json).

    Read from the Go module cache, which `make lab-up` fills. When the module is not
    there the test skips, saying so; under CI (COBALTCORE_CI=1) it is downloaded instead, and a
    failed download fails the test: CI must never pass a schema check it did not run.
    """
    try:
        cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True,
                               timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        cache = os.environ.get("GOMODCACHE") or os.path.expanduser("~/go/pkg/mod")
    path = os.path.join(cache, "%s@%s" % (_go_escape(module), _go_escape(version)))
    if os.path.isdir(path):
        return path
    if not in_ci():
        pytest.skip("%s@%s is not in the Go module cache %s (`make lab-up` fetches it; with %s=1, as under "
                    "CI, the test downloads it and fails when it cannot)" % (module, version, cache, CI_VARIABLE))
    try:
        return _go_download(module, version)
    except (OSError, subprocess.SubprocessError, RuntimeError) as error:
        pytest.fail("%s=1: %s@%s is not in the Go module cache and cannot be downloaded: %s"
                    % (CI_VARIABLE, module, version, error))


def lab_upstream_crds(name):
    """(entry of lab/crds/upstream.json, [paths of its CRD files]) of the upstream CRD set `name`."""
    with open(os.path.join(REPO, "lab", "crds", "upstream.json")) as handle:
        (entry,) = [e for e in json.load(handle) if e["name"] == name]
    root = go_module_dir(entry["module"], entry["version"])
    paths = sorted(path for pattern in entry["files"] for path in glob.glob(os.path.join(root, pattern)))
    assert paths, "%s@%s has none of %s" % (entry["module"], entry["version"], entry["files"])
    return entry, paths


def load_inventory(region_dir):
    """{'name', 'groups', 'hostvars'} of an inventory directory, read without Ansible.

    Reads hosts.yml (groups of 'all.children' with their hosts) and every
    host_vars/<host>/*.yml, which is all the region model uses.
    """
    with open(os.path.join(region_dir, "hosts.yml")) as handle:
        hosts = yaml.safe_load(handle)["all"]
    groups = dict((group, list((body or {}).get("hosts") or {}))
                  for group, body in hosts.get("children", {}).items())
    hostvars = {}
    for host in sorted(set(host for members in groups.values() for host in members)):
        variables = dict(hosts.get("vars") or {})
        for path in sorted(glob.glob(os.path.join(region_dir, "host_vars", host, "*.yml"))):
            with open(path) as handle:
                variables.update(yaml.safe_load(handle) or {})
        hostvars[host] = variables
    return {"name": hosts["vars"]["cobaltcore_region"], "groups": groups, "hostvars": hostvars}


@pytest.fixture
def fixture_yaml():
    """Factory: the YAML documents of tests/unit/fixtures/<relative path>."""
    def load(relative):
        with open(os.path.join(FIXTURES, relative)) as handle:
            documents = [doc for doc in yaml.safe_load_all(handle) if doc is not None]
        return documents[0] if len(documents) == 1 else documents
    return load


@pytest.fixture
def inventory_of():
    """Factory: the inventory-shaped dict of inventories/<region>."""
    return lambda region: load_inventory(os.path.join(INVENTORIES, region))


@pytest.fixture
def inventory_path():
    """Factory: a path below inventories/."""
    return lambda *parts: os.path.join(INVENTORIES, *parts)


@pytest.fixture
def tenants_dir():
    """Factory: inventories/<region>/tenants."""
    return lambda region: os.path.join(INVENTORIES, region, "tenants")


def merge_patch(target, patch):
    """A JSON merge patch (RFC 7386) applied in place, as the API server applies one: None deletes a
    key, mappings merge, anything else replaces. For the unit tests' in-memory API servers."""
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict) and isinstance(target.get(key), dict):
            merge_patch(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
