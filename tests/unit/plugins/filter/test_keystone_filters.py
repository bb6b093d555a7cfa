# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Keystone filters are thin wrappers over module_utils.keystone_catalog."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.c5c3.cobaltcore.plugins.filter import keystone
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import catalog as keystone_catalog
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.keystone import clusters as keystone_clusters

FILTERS = keystone.FilterModule().filters()
SETTINGS = {"namespace": "openstack", "region": "lab", "keystone_public_url": "http://127.0.0.1:5000/v3"}


def test_the_filters():
    assert sorted(FILTERS) == ["keystone_bootstrap_batch", "keystone_catalog_plan", "keystone_korc_results",
                               "keystone_pending", "keystone_tenant_clusters", "keystone_verified_records",
                               "korc_import_failure", "korc_refs"]


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_each_filter_has_its_documentation(name):
    with open(os.path.join(os.path.dirname(keystone.__file__), name + ".yml")) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == name


def test_plan_is_what_module_utils_returns():
    assert FILTERS["keystone_catalog_plan"](SETTINGS) == keystone_catalog.catalog_plan(SETTINGS)


def test_plan_problems_become_one_filter_error():
    with pytest.raises(AnsibleFilterError) as error:
        FILTERS["keystone_catalog_plan"]({"namespace": "x", "keystone_public_url": "keystone:5000"})
    assert "nothing was changed" in str(error.value)
    assert "\n- region: is required" in str(error.value)
    assert "\n- keystone_public_url: 'keystone:5000' is not an http or https URL" in str(error.value)


def test_refs_and_failure_message():
    plan = keystone_catalog.catalog_plan(SETTINGS)
    refs = FILTERS["korc_refs"](plan["imports"])
    assert refs[0] == {"api_version": "openstack.k-orc.cloud/v1alpha1", "kind": "Domain", "name": "default",
                       "namespace": "openstack", "labels": {"app.kubernetes.io/managed-by": "c5c3.cobaltcore",
                                                            "c5c3.io/openstack-cluster-name": "openstack"}}
    assert FILTERS["korc_refs"](None) == []
    assert FILTERS["korc_import_failure"]({"msg": "x"}, plan["imports"]) == "K-ORC import failed: x"


def test_batch_is_what_module_utils_returns_and_its_problems_one_filter_error():
    defaults = {"name": "lab", "namespace": "openstack", "region": "lab"}
    assert FILTERS["keystone_bootstrap_batch"]([], defaults) == keystone_clusters.batch([], defaults)
    with pytest.raises(AnsibleFilterError) as error:
        FILTERS["keystone_bootstrap_batch"]([{"namespace": "a"}, {"namespace": "a", "region": ""}], defaults)
    assert "nothing was changed" in str(error.value)
    assert "\n- clusters: namespace a is listed more than once" in str(error.value)
    assert FILTERS["keystone_tenant_clusters"]([], []) == []
