# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.dependency_graph import (
    DEPENDS, PHASES, phase_of, phases, topological_order)


def test_the_seeds_seven_phases():
    assert [(p["phase"], p["name"], list(p["components"]), p["optional"]) for p in PHASES] == [
        (1, "infrastructure", ["mariadb", "rabbitmq", "valkey", "memcached"], False),
        (2, "identity", ["keystone"], False),
        (3, "service-catalog", ["k-orc"], False),
        (4, "core", ["glance", "placement"], False),
        (5, "compute", ["nova", "neutron", "cinder"], False),
        (6, "scheduler", ["cortex"], True),
        (7, "testing", ["tempest"], True),
    ]


@pytest.mark.parametrize("component, needs", [
    ("keystone", {"mariadb", "memcached"}),
    ("k-orc", {"keystone"}),
    ("glance", {"keystone", "k-orc"}),
    ("placement", {"keystone", "k-orc"}),
    ("nova", {"keystone", "k-orc", "placement", "rabbitmq", "glance"}),
    ("cortex", {"nova", "cinder"}),
    ("tempest", {"nova", "neutron", "cinder", "glance", "keystone"}),
])
def test_the_seeds_depends_notes_are_kept(component, needs):
    assert needs <= set(DEPENDS[component])


def test_every_component_is_in_one_phase():
    listed = [c for p in PHASES for c in p["components"]]
    assert sorted(listed) == sorted(DEPENDS) and len(set(listed)) == len(listed)


def test_dependencies_point_to_earlier_phases():
    for component, needs in DEPENDS.items():
        for need in needs:
            assert phase_of(need) < phase_of(component), (component, need)


def test_topological_order_is_the_phase_order():
    assert topological_order() == [
        "mariadb", "rabbitmq", "valkey", "memcached", "keystone", "k-orc",
        "glance", "placement", "nova", "neutron", "cinder", "cortex", "tempest"]


def test_topological_order_respects_every_dependency():
    order = topological_order()
    for component, needs in DEPENDS.items():
        assert all(order.index(need) < order.index(component) for need in needs)


def test_order_of_a_custom_graph():
    assert topological_order({"b": ("a",), "a": (), "c": ("b", "a")}) == ["a", "b", "c"]


def test_cycles_and_unknown_dependencies_are_refused():
    with pytest.raises(InputError, match="^depends: dependency cycle among a, b$"):
        topological_order({"a": ("b",), "b": ("a",)})
    with pytest.raises(InputError, match="^depends.a: unknown component zzz$"):
        topological_order({"a": ("zzz",)})


def test_phase_of_unknown_component():
    with pytest.raises(KeyError):
        phase_of("swift")


def test_phases_as_plain_data():
    data = phases()
    assert data[1] == {"phase": 2, "name": "identity", "optional": False,
                       "components": [{"name": "keystone", "depends": ["mariadb", "memcached"]}]}
    assert len(data) == 7
