# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ansible_collections.c5c3.cobaltcore.

The collection's code imports itself by its collection path (Ansible requires
it). From a plain checkout that path is a symlink under .cache/collections
(git-ignored), the same one the Makefile creates for ansible-playbook.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import glob
import os
import sys

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
