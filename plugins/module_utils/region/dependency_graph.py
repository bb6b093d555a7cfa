# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The c5c3-operator's deployment dependency graph (seed 003) as data.

PHASES is the seed's "Deployment Dependency Graph". DEPENDS joins what the seed
states per component: the graph's "depends:" notes, each service CR's
dependsOn, and the infrastructure table ("OpenStack Service Dependencies").
Data and an ordering over it; region/control_plane_health.py judges a
ControlPlane's health by PHASES (module c5c3.cobaltcore.control_plane_health).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem

PHASES = (
    {"phase": 1, "name": "infrastructure", "optional": False,
     "components": ("mariadb", "rabbitmq", "valkey", "memcached")},
    {"phase": 2, "name": "identity", "optional": False, "components": ("keystone",)},
    {"phase": 3, "name": "service-catalog", "optional": False, "components": ("k-orc",)},
    {"phase": 4, "name": "core", "optional": False, "components": ("glance", "placement")},
    {"phase": 5, "name": "compute", "optional": False,
     "components": ("nova", "neutron", "cinder")},
    {"phase": 6, "name": "scheduler", "optional": True, "components": ("cortex",)},
    {"phase": 7, "name": "testing", "optional": True, "components": ("tempest",)},
)

DEPENDS = {
    "mariadb": (),
    "rabbitmq": (),
    "valkey": (),
    "memcached": (),
    "keystone": ("mariadb", "memcached"),
    "k-orc": ("keystone",),
    "glance": ("keystone", "k-orc", "mariadb"),
    "placement": ("keystone", "k-orc", "mariadb"),
    "nova": ("keystone", "k-orc", "placement", "rabbitmq", "glance", "mariadb"),
    "neutron": ("keystone", "k-orc", "rabbitmq", "mariadb"),
    "cinder": ("keystone", "k-orc", "rabbitmq", "mariadb"),
    "cortex": ("nova", "cinder"),
    "tempest": ("nova", "neutron", "cinder", "glance", "keystone"),
}


def phase_of(component):
    """The phase number of a component; KeyError for an unknown one."""
    for phase in PHASES:
        if component in phase["components"]:
            return phase["phase"]
    raise KeyError(component)


def topological_order(depends=None):
    """Components so that each comes after everything it depends on.

    Ties are broken by phase, then by the seed's order inside the phase, so
    the order is stable. InputError names the components of a cycle or a
    dependency that is not a component.
    """
    depends = DEPENDS if depends is None else depends
    problems = []
    for component, needs in depends.items():
        unknown = [need for need in needs if need not in depends]
        if unknown:
            problems.append(problem("depends.%s" % component, "unknown component %s" % ", ".join(unknown)))
    if problems:
        raise InputError(problems)
    rank = dict((component, index) for index, component in enumerate(_seed_order(depends)))
    done = []
    pending = sorted(depends, key=rank.get)
    while pending:
        ready = [component for component in pending
                 if all(need in done for need in depends[component])]
        if not ready:
            raise InputError([problem("depends", "dependency cycle among %s" % ", ".join(pending))])
        done.append(ready[0])
        pending.remove(ready[0])
    return done


def _seed_order(depends):
    listed = [component for phase in PHASES for component in phase["components"]]
    return [c for c in listed if c in depends] + sorted(c for c in depends if c not in listed)


def phases():
    """The phases as plain dicts, each with its components and their depends."""
    return [{
        "phase": phase["phase"],
        "name": phase["name"],
        "optional": phase["optional"],
        "components": [{"name": component, "depends": list(DEPENDS[component])}
                       for component in phase["components"]],
    } for phase in PHASES]
