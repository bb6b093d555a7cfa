# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight filter is a thin wrapper over module_utils.region.preflight; the role uses it."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from conftest import REPO
from ansible_collections.c5c3.cobaltcore.plugins.filter import preflight as preflight_filter
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import region_needs
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import preflight

FILTERS = preflight_filter.FilterModule().filters()
CHECKS = {"kubeconfig": "/k.yaml", "kubeconfig_exists": True, "min_version": "1.31", "max_version": "1.37",
          "cluster_info": {"version": {"gitVersion": "v1.30.1"}, "api_groups": ["core"]},
          "api_groups_by_group": {"gardener": ["core.gardener.cloud"]}, "group_names": ["gardener"]}


def test_the_filters():
    assert sorted(FILTERS) == ["preflight_problems", "preflight_reads", "region_problems"]
    assert FILTERS["preflight_reads"](["ironcore"]) == region_needs.reads(["ironcore"])


def test_region_problems_filter_names_pools_by_their_inventory_host():
    region = {"name": "r", "hypervisor_pools": [{"name": "hv-a", "workers": 0}]}
    assert FILTERS["region_problems"](region) == ["region hypervisor_pools[hv-a].workers: must be at least 1, got 0"]
    with open(os.path.join(os.path.dirname(preflight_filter.__file__), "region_problems.yml")) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == "region_problems"


def test_the_documented_options_are_the_keys_it_takes():
    with open(os.path.join(os.path.dirname(preflight_filter.__file__), "preflight_problems.yml")) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == "preflight_problems"
    documented = doc["DOCUMENTATION"]["options"]["_input"]["suboptions"]
    assert sorted(documented) == sorted(preflight.REQUIRED + tuple(preflight.OPTIONAL))
    assert sorted(k for k, v in documented.items() if v.get("required")) == sorted(preflight.REQUIRED)
    for key, default in preflight.OPTIONAL.items():
        assert documented[key].get("default") == default, key


def test_the_problems_are_what_module_utils_returns():
    found = FILTERS["preflight_problems"](CHECKS)
    assert found == preflight.problems(CHECKS) == [
        "Kubernetes v1.30.1 is outside the supported range 1.31 to 1.37",
        "API group core.gardener.cloud is not served, and the phases of this cluster need it"]


def test_malformed_checks_are_one_filter_error():
    with pytest.raises(AnsibleFilterError) as error:
        FILTERS["preflight_problems"](dict(CHECKS, kubeconfig_exists="yes", check_keystone=None))
    assert str(error.value) == ("invalid preflight checks:\n- kubeconfig_exists: must be a boolean, got str\n"
                                "- check_keystone: must be a boolean, got NoneType")


def test_the_role_collects_its_problems_with_the_filter():
    with open(os.path.join(REPO, "roles", "preflight", "tasks", "main.yml")) as handle:
        tasks = dict((task["name"], task) for task in yaml.safe_load(handle))
    collect = tasks["Collect the problems of this cluster"]["ansible.builtin.set_fact"]
    assert collect["preflight_problems"].strip().endswith("| c5c3.cobaltcore.preflight_problems }}")
