# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's problem list of one cluster, from the results its checks registered."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from conftest import REPO
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import preflight

KUBECONFIG = "/srv/region/.private/kubeconfig/lab-control-plane.yaml"
with open(os.path.join(REPO, "roles", "preflight", "defaults", "main.yml")) as _handle:
    GROUPS = yaml.safe_load(_handle)["preflight_api_groups_by_group"]


SERVED = ("core", "apps", "source.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io", "openstack.k-orc.cloud", "c5c3.io")


def cluster_info(version="v1.37.2", groups=SERVED):
    """A c5c3.cobaltcore.cluster_info result as the module returns it."""
    return {"changed": False, "attempts": 1, "requests": {"GET": 3},
            "api_groups": sorted(groups), "api_versions": ["v1"],
            "version": {"gitVersion": version, "major": "1", "minor": (version.split(".") + ["", ""])[1]}}


def checks(**changes):
    values = {"kubeconfig": KUBECONFIG, "kubeconfig_exists": True, "kubeconfig_fetched_later": False,
              "cluster_info": cluster_info(), "min_version": "1.31", "max_version": "1.37",
              "api_groups_by_group": GROUPS, "group_names": ["control_plane"], "check_keystone": True,
              "keystone": {"changed": False, "user_id": "u-1", "expires_at": "2026-12-07T06:00:00Z"},
              "keystone_cloud": "eu-de-1-admin",
              "keystone_clouds_yaml": "/srv/region/.private/clouds.yaml"}
    values.update(changes)
    return values


UNREACHABLE = {"failed": False, "attempts": 3, "msg": "Failed to get client due to HTTPSConnectionPool: refused"}
SKIPPED = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"}


def test_a_ready_cluster_has_no_problem():
    assert preflight.problems(checks()) == []


def test_only_the_required_keys_are_needed():
    assert preflight.problems({"kubeconfig": KUBECONFIG, "kubeconfig_exists": True, "cluster_info": cluster_info(),
                               "min_version": "1.31", "max_version": "1.37"}) == []


def test_every_problem_of_a_cluster_in_order():
    found = preflight.problems(checks(
        min_version="1.29", max_version="1.30",
        api_groups_by_group={"control_plane": ["c5c3.io", "missing.example.com", "apps", "other.example.com"],
                             "management": ["unrelated.example.com"]},
        keystone={"failed": False, "attempts": 3, "msg": "Cloud no-such-cloud was not found."},
        keystone_cloud="no-such-cloud"))
    assert found == [
        "Kubernetes v1.37.2 is outside the supported range 1.29 to 1.30",
        "API group missing.example.com is not served, and the phases of this cluster need it",
        "API group other.example.com is not served, and the phases of this cluster need it",
        "Keystone: no token for cloud no-such-cloud from /srv/region/.private/clouds.yaml: "
        "Cloud no-such-cloud was not found.",
    ]


@pytest.mark.parametrize("version, low, high, inside", [
    ("v1.31.0", "1.31", "1.37", True),
    ("v1.37.9", "1.31", "1.37", True),
    ("v1.30.14", "1.31", "1.37", False),
    ("v1.38.0", "1.31", "1.37", False),
    ("1.34.1+k3s1", "1.31", "1.37", True),
    ("v1.9.0", "1.31", "1.37", False),  # numbers, not text: 9 < 31
    ("v1.100.0", "1.31", "1.37", False),
    ("v2.0.0", "1.31", "1.37", False),
    ("v1.31.2", "1.31.0", "1.37", False),  # 1.31 < 1.31.0, as Ansible's loose version test has it
    ("", "1.31", "1.37", False),
])
def test_the_supported_range_is_inclusive_by_major_minor(version, low, high, inside):
    found = preflight.problems(checks(cluster_info=cluster_info(version), min_version=low, max_version=high))
    assert found == ([] if inside else ["Kubernetes %s is outside the supported range %s to %s" % (version, low, high)])


def test_a_missing_kubeconfig_is_the_only_problem():
    found = preflight.problems(checks(kubeconfig_exists=False, cluster_info=SKIPPED, check_keystone=False,
                                      keystone=SKIPPED))
    assert found == ["kubeconfig %s does not exist" % KUBECONFIG]


def test_a_shoots_kubeconfig_that_phase_2_fetches_later_is_no_problem():
    assert preflight.problems(checks(kubeconfig_exists=False, kubeconfig_fetched_later=True,
                                     cluster_info=SKIPPED)) == []


def test_once_fetched_a_shoot_is_checked_as_any_other():
    found = preflight.problems(checks(kubeconfig_fetched_later=True, cluster_info=UNREACHABLE, check_keystone=False))
    assert found == ["API server not reachable with %s: %s" % (KUBECONFIG, UNREACHABLE["msg"])]


def test_an_unreachable_api_server_is_not_judged_further():
    found = preflight.problems(checks(cluster_info=UNREACHABLE, min_version="1.40", max_version="1.41",
                                      api_groups_by_group={"control_plane": ["missing.example.com"]}))
    assert found == ["API server not reachable with %s: %s" % (KUBECONFIG, UNREACHABLE["msg"])]


def test_no_message_is_no_answer():
    found = preflight.problems(checks(cluster_info={"failed": False}, check_keystone=True, keystone={"attempts": 3}))
    assert found == ["API server not reachable with %s: no answer" % KUBECONFIG,
                     "Keystone: no token for cloud eu-de-1-admin from /srv/region/.private/clouds.yaml: no answer"]


def test_keystone_is_judged_only_when_it_was_asked():
    assert preflight.problems(checks(check_keystone=False, keystone=SKIPPED)) == []
    found = preflight.problems(checks(keystone={"failed": True, "msg": "refused"}))
    assert found == ["Keystone: no token for cloud eu-de-1-admin from /srv/region/.private/clouds.yaml: refused"]


def test_the_api_groups_are_those_of_the_hosts_inventory_groups():
    # A Shoot has nothing before phase 2 and 3 bring Flux and the operators; the management cluster runs Flux.
    assert preflight.needed_api_groups(GROUPS, ["hypervisor_pools", "shoots"]) == []
    assert preflight.needed_api_groups(GROUPS, ["storage_pools", "management"]) == [
        "source.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"]
    assert preflight.needed_api_groups(GROUPS, ["garden_only"]) == []
    assert preflight.needed_api_groups({"a": "one.example.com"}, ["a"]) == ["one.example.com"]
    found = preflight.problems(checks(group_names=["gardener", "ironcore"]))
    assert found == ["API group core.gardener.cloud is not served, and the phases of this cluster need it",
                     "API group metal.ironcore.dev is not served, and the phases of this cluster need it"]


def test_served_groups_are_cluster_infos():
    assert preflight.served_api_groups(cluster_info(groups=("core", "apps", "c5c3.io"))) == ["apps", "c5c3.io", "core"]
    assert preflight.served_api_groups(SKIPPED) == []


def test_the_server_version_is_empty_until_the_server_answered():
    assert preflight.server_version(cluster_info("v1.35.1")) == "v1.35.1"
    assert preflight.server_version(UNREACHABLE) == "" and preflight.server_version(None) == ""


def test_no_token_or_password_reaches_a_problem():
    info = cluster_info(version="v1.20.0")
    info["connection"] = {"host": "https://127.0.0.1:6443", "password": "basic-auth-password-0123"}
    found = preflight.problems(checks(cluster_info=info, keystone={"failed": True, "msg": "refused"}))
    assert len(found) == 2 and "basic-auth-password-0123" not in " ".join(found)


def test_malformed_checks_list_every_problem():
    with pytest.raises(InputError) as error:
        preflight.problems({"kubeconfig_exists": "yes", "min_version": 1.31, "max_version": "latest",
                            "cluster_info": "up", "api_groups_by_group": {"gardener": [1]},
                            "group_names": "control_plane", "check_keystone": "true", "extra": 1})
    assert error.value.problems == [
        "kubeconfig: is required",
        "extra: is not a preflight check",
        "kubeconfig_exists: must be a boolean, got str",
        "check_keystone: must be a boolean, got str",
        "min_version: must be a version like 1.31, got 1.31",
        "max_version: must be a version like 1.31, got 'latest'",
        "cluster_info: must be a mapping, got str",
        "api_groups_by_group.gardener: must be a list of API group names",
        "group_names: must be a list of inventory group names",
    ]


def test_checks_must_be_a_mapping():
    with pytest.raises(InputError) as error:
        preflight.problems(["kubeconfig"])
    assert error.value.problems == ["checks: must be a mapping, got list"]


# --- the region model, checked once in preflight --------------------------------------------

def lab_like_inventory(hv_a_workers=2, hv_b_workers=1, st_class="lab-storage"):
    ironcore = {"machine_pools": ["lab-rack-1"], "machine_classes": ["lab-kvm", "lab-storage", "lab-gpu"]}
    return {"name": "lab", "groups": {
        "ironcore": ["baremetal"], "gardener": ["garden"], "management": ["mgmt"], "control_plane": ["lab-control-plane"],
        "hypervisor_pools": ["hv-pool-a", "hv-pool-b"], "storage_pools": ["st-pool-a"]},
        "hostvars": {
            "baremetal": {"cobaltcore_ironcore": ironcore},
            "lab-control-plane": {"cobaltcore_pool": {"ironcore": {
                "machine_pool": "lab-rack-1", "machine_class": "lab-kvm"}}},
            "hv-pool-a": {"cobaltcore_pool": {"workers": hv_a_workers, "ironcore": {"machine_class": "lab-kvm"}}},
            "hv-pool-b": {"cobaltcore_pool": {"workers": hv_b_workers, "ironcore": {"machine_class": "lab-kvm"}}},
            "st-pool-a": {"cobaltcore_pool": {"ironcore": {"machine_pool": "lab-rack-1",
                                                           "machine_class": st_class}}}}}


def test_region_problems_name_every_bad_pool_by_its_inventory_host():
    assert preflight.region_problems(lab_like_inventory()) == []
    assert preflight.region_problems(lab_like_inventory(hv_a_workers=-1, hv_b_workers="one")) == [
        "region hypervisor_pools[hv-pool-a].workers: must be at least 1, got -1",
        "region hypervisor_pools[hv-pool-b].workers: must be an integer, got string"]
