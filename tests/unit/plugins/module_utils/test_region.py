# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import (
    CONTROL_PLANE, HYPERVISOR, STORAGE, Region, build_region, region_from_inventory)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError

from test_mappings import LazyDict  # pylint: disable=import-error

MINIMAL = {"name": "eu-de-1", "hypervisor_pools": ["hv-pool-a", "hv-pool-b"],
           "storage_pools": ["st-pool-a", {"name": "st-pool-b"}]}


def problems_of(data):
    """(field, message) of each problem 'region <field>: <message>'."""
    with pytest.raises(InputError) as error:
        build_region(data)
    assert all(problem.startswith("region") for problem in error.value.problems), error.value.problems
    return [tuple(problem[len("region"):].lstrip(" ").split(": ", 1)) for problem in error.value.problems]


def test_minimal_region_gets_the_default_control_plane():
    region = build_region(MINIMAL)
    assert region.name == "eu-de-1"
    assert [pool.name for pool in region.control_planes] == ["eu-de-1-control-plane"]
    assert [pool.name for pool in region.hypervisor_pools] == ["hv-pool-a", "hv-pool-b"]
    assert [pool.name for pool in region.storage_pools] == ["st-pool-a", "st-pool-b"]
    assert region.pool("st-pool-b").kind == STORAGE
    assert region.pool("hv-pool-a").kind == HYPERVISOR
    assert region.pool("eu-de-1-control-plane").kind == CONTROL_PLANE
    assert region.pool("nope") is None
    assert region.default_control_plane == "eu-de-1-control-plane"


def test_full_model_round_trips():
    model = build_region(MINIMAL).to_dict()
    assert model == {
        "name": "eu-de-1",
        "clusters": {},
        "control_planes": [{"name": "eu-de-1-control-plane"}],
        "hypervisor_pools": [{"name": "hv-pool-a"}, {"name": "hv-pool-b"}],
        "storage_pools": [{"name": "st-pool-a"}, {"name": "st-pool-b"}],
    }
    assert build_region(model).to_dict() == model


def test_pools_of_lazy_inventory_data_are_copied_by_their_data():
    region = build_region(LazyDict(MINIMAL, storage_pools=["st-pool-a", LazyDict(name="st-pool-b", labels=LazyDict(a="b"))]))
    assert region.pool("st-pool-b").to_dict() == {"name": "st-pool-b", "labels": {"a": "b"}}
    assert region.pool("st-pool-b").labels.__class__ is dict


def test_a_region_object_is_taken_as_it_is():
    region = build_region(MINIMAL)
    assert build_region(region) is region
    assert isinstance(region, Region)


def test_explicit_empty_control_planes_stay_empty():
    assert build_region(dict(MINIMAL, control_planes=[])).control_planes == []


@pytest.mark.parametrize("data, expected", [
    (None, [("", "must be a mapping, got null")]),
    ({}, [("name", "is required")]),
    ({"name": "x", "pools": []}, [("pools", "unknown field")]),
    ({"name": "Bad_Name"}, [("name", "'Bad_Name' is not a DNS-1123 label"),
                            ("control_planes[Bad_Name-control-plane].name",
                             "'Bad_Name-control-plane' is not a DNS-1123 label")]),
    ({"name": "r", "hypervisor_pools": "hv"}, [("hypervisor_pools", "must be a list, got string")]),
    ({"name": "r", "hypervisor_pools": [5]}, [("hypervisor_pools[0]", "must be a mapping, got integer")]),
    ({"name": "r", "hypervisor_pools": [{"workers": 2}]}, [("hypervisor_pools[0].name", "is required")]),
    ({"name": "r", "storage_pools": ["UPPER"]},
     [("storage_pools[UPPER].name", "'UPPER' is not a DNS-1123 label")]),
])
def test_structure_and_name_rules(data, expected):
    assert problems_of(data) == expected


def test_names_are_unique_across_all_clusters():
    problems = problems_of({"name": "r", "clusters": {"management": "mgmt"},
                            "hypervisor_pools": ["a", "b", "a"], "storage_pools": ["b", "mgmt"]})
    assert problems == [
        ("hypervisor_pools[2].name", "a is also hypervisor_pools[0]"),
        ("storage_pools[0].name", "b is also hypervisor_pools[1]"),
        ("storage_pools[1].name", "mgmt is also clusters.management"),
    ]


@pytest.mark.parametrize("workers, expected", [
    (0, [("hypervisor_pools[hv].workers", "must be at least 1, got 0")]),
    (-3, [("hypervisor_pools[hv].workers", "must be at least 1, got -3")]),
    ("5", [("hypervisor_pools[hv].workers", "must be an integer, got string")]),
    (True, [("hypervisor_pools[hv].workers", "must be an integer, got boolean")]),
    (1, []),
])
def test_workers_at_least_one(workers, expected):
    data = {"name": "r", "hypervisor_pools": [{"name": "hv", "workers": workers}]}
    if expected:
        assert problems_of(data) == expected
    else:
        assert build_region(data).pool("hv").data["workers"] == 1


def test_each_pools_region_must_match():
    assert problems_of({"name": "eu-de-1", "storage_pools": [{"name": "st-pool-us", "region": "us-east-1"}]}) == [
        ("storage_pools[st-pool-us].region", "st-pool-us belongs to region us-east-1, not eu-de-1")]


def test_storage_fields_only_on_storage_pools():
    assert problems_of({"name": "r", "hypervisor_pools": [{"name": "hv", "capacity": "1Ti"}]}) == [
        ("hypervisor_pools[hv].capacity", "unknown field")]


@pytest.mark.parametrize("field, value, message", [
    ("capacity", "lots", "'lots' is not a quantity such as 500Ti"),
    ("media", "tape", "must be one of nvme, ssd, hdd, got 'tape'"),
    ("encrypted", "yes", "must be a boolean, got string"),
])
def test_storage_pool_fields(field, value, message):
    assert problems_of({"name": "r", "storage_pools": [{"name": "st", field: value}]}) == [
        ("storage_pools[st].%s" % field, message)]


def test_labels_must_be_kubernetes_labels():
    problems = problems_of({"name": "r", "hypervisor_pools": [
        {"name": "hv", "labels": {"ok": "yes", "bad key": "x", "dedicated": True}}]})
    assert problems == [
        ("hypervisor_pools[hv].labels.dedicated", "must be a string, got boolean"),
    ]
    problems = problems_of({"name": "r", "hypervisor_pools": [{"name": "hv", "labels": {"bad key": "x"}}]})
    assert problems == [("hypervisor_pools[hv].labels.bad key", "'bad key': 'x' is not a valid Kubernetes label")]


IRONCORE = {"machine_pools": ["rack-1", "rack-2"], "machine_classes": ["kvm"]}


def test_ironcore_references_must_be_declared():
    problems = problems_of({"name": "r", "ironcore": IRONCORE, "hypervisor_pools": [
        {"name": "hv", "ironcore": {"machine_pool": "rack-9", "machine_class": "gpu"}}]})
    assert problems == [
        ("hypervisor_pools[hv].ironcore.machine_pool",
         "rack-9 is not among the IronCore machine pools of region r (rack-1, rack-2)"),
        ("hypervisor_pools[hv].ironcore.machine_class",
         "gpu is not among the IronCore machine classes of region r (kvm)"),
    ]


def test_a_pools_zone_is_a_label_value_and_one_of_the_declared_zones():
    problems = problems_of({"name": "r", "ironcore": dict(IRONCORE, zones=["r-1a", "r-1b"]), "hypervisor_pools": [
        {"name": "hv", "zone": "r-1c"}, {"name": "hv2", "zone": "not a zone"}, {"name": "hv3", "zone": "r-1b"}],
        "storage_pools": [{"name": "st", "zone": ""}]})
    assert problems == [
        ("hypervisor_pools[hv].zone", "r-1c is not among the IronCore zones of region r (r-1a, r-1b)"),
        ("hypervisor_pools[hv2].zone", "'not a zone' is not a zone name (a label value: topology.kubernetes.io/zone)"),
        ("hypervisor_pools[hv2].zone", "not a zone is not among the IronCore zones of region r (r-1a, r-1b)"),
        ("storage_pools[st].zone", "'' is not a zone name (a label value: topology.kubernetes.io/zone)"),
    ]
    # Without declared zones any zone name is taken; the declaration survives the round trip.
    assert build_region({"name": "r", "ironcore": IRONCORE, "hypervisor_pools": [{"name": "hv", "zone": "r-1c"}]})
    assert build_region({"name": "r", "ironcore": dict(IRONCORE, zones=["a"])}).to_dict()["ironcore"]["zones"] == ["a"]
    assert "zones" not in build_region({"name": "r", "ironcore": IRONCORE}).to_dict()["ironcore"]


def test_high_availability_is_a_hypervisor_pools_boolean():
    assert problems_of({"name": "r", "hypervisor_pools": [{"name": "hv", "high_availability": "yes"}]}) == [
        ("hypervisor_pools[hv].high_availability", "must be a boolean, got string")]
    assert build_region({"name": "r", "hypervisor_pools": [{"name": "hv", "high_availability": True}]})


def test_ironcore_references_unchecked_without_declaration():
    region = build_region({"name": "r", "hypervisor_pools": [
        {"name": "hv", "ironcore": {"machine_pool": "rack-9", "machine_class": "gpu"}}]})
    assert region.ironcore is None


def test_dedicated_pool_must_not_share_its_machine_pool():
    problems = problems_of({"name": "r", "ironcore": IRONCORE, "hypervisor_pools": [
        {"name": "hv-shared", "ironcore": {"machine_pool": "rack-1"}},
        {"name": "hv-dedicated", "labels": {"dedicated": "true"}, "ironcore": {"machine_pool": "rack-1"}},
    ]})
    assert problems == [("hypervisor_pools[hv-dedicated].ironcore.machine_pool",
                         "hv-dedicated is dedicated but shares IronCore machine pool rack-1 with hv-shared")]


def test_shared_pools_may_share_machine_pools():
    build_region({"name": "r", "ironcore": IRONCORE, "hypervisor_pools": [
        {"name": "a", "ironcore": {"machine_pool": "rack-1"}},
        {"name": "b", "ironcore": {"machine_pool": "rack-1"}}]})


INVENTORY = {
    "name": "eu-de-1",
    "groups": {
        "all": ["garden", "baremetal", "management", "eu-de-1-control-plane", "hv-pool-a", "st-pool-a"],
        "ungrouped": [],
        "gardener": ["garden"],
        "ironcore": ["baremetal"],
        "management": ["management"],
        "control_plane": ["eu-de-1-control-plane"],
        "hypervisor_pools": ["hv-pool-a"],
        "storage_pools": ["st-pool-a"],
    },
    "hostvars": {
        "garden": {"ansible_connection": "local"},
        "baremetal": {"cobaltcore_ironcore": {"machine_pools": ["rack-1"], "machine_classes": ["kvm"]}},
        "management": {},
        "eu-de-1-control-plane": {"cobaltcore_pool": {"workers": 5}},
        "hv-pool-a": {"cobaltcore_region": "eu-de-1", "cobaltcore_pool": {
            "region": "eu-de-1", "workers": 50, "labels": {"tier": "standard"},
            "ironcore": {"machine_pool": "rack-1", "machine_class": "kvm"}}},
        "st-pool-a": {"cobaltcore_pool": {"workers": 10, "capacity": "500Ti", "media": "nvme"}},
    },
}


def test_region_from_inventory():
    assert region_from_inventory(INVENTORY) == {
        "name": "eu-de-1",
        "clusters": {"gardener": "garden", "ironcore": "baremetal", "management": "management"},
        "control_planes": [{"name": "eu-de-1-control-plane", "workers": 5}],
        "hypervisor_pools": [{"name": "hv-pool-a", "region": "eu-de-1", "workers": 50,
                              "labels": {"tier": "standard"},
                              "ironcore": {"machine_pool": "rack-1", "machine_class": "kvm"}}],
        "storage_pools": [{"name": "st-pool-a", "workers": 10, "capacity": "500Ti", "media": "nvme"}],
        "ironcore": {"machine_pools": ["rack-1"], "machine_classes": ["kvm"]},
    }


def test_build_region_takes_the_inventory_shape():
    region = build_region(INVENTORY)
    assert region.clusters["gardener"] == "garden"
    assert region.pool("hv-pool-a").labels == {"tier": "standard"}
    assert region.ironcore == {"machine_pools": ["rack-1"], "machine_classes": ["kvm"]}


def test_hosts_without_pool_vars_are_bare_pools():
    inventory = dict(INVENTORY, hostvars={})
    assert build_region(inventory).pool("st-pool-a").to_dict() == {"name": "st-pool-a"}


def test_inventory_problems():
    groups = dict(INVENTORY["groups"], gardener=["garden", "garden-2"])
    hostvars = dict(INVENTORY["hostvars"], **{"hv-pool-a": {"cobaltcore_pool": ["not", "a", "mapping"]}})
    with pytest.raises(InputError) as error:
        region_from_inventory(dict(INVENTORY, groups=groups, hostvars=hostvars))
    assert error.value.problems == [
        "inventory groups.gardener: must hold one cluster, holds garden, garden-2",
        "inventory hostvars.hv-pool-a.cobaltcore_pool: must be a mapping",
    ]
    with pytest.raises(InputError, match="^inventory: must be a mapping with name, groups, hostvars$"):
        region_from_inventory(["not", "an", "inventory"])


def test_inventory_region_name_is_validated():
    with pytest.raises(InputError, match="^region name: must be a string, got null$"):
        build_region(dict(INVENTORY, name=None))


def test_the_error_message_lists_every_problem():
    with pytest.raises(InputError) as error:
        build_region({"name": "r", "hypervisor_pools": [{"workers": 0}]})
    assert str(error.value) == "region hypervisor_pools[0].name: is required; region hypervisor_pools[0].workers: " \
        "must be at least 1, got 0"
