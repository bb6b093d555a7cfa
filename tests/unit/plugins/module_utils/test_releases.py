# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release of an OpenStack cluster: the steps of a hop in seed 003's order, and the refusals."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import releases

OLD, NEW = releases.TAGS["2025.2"], releases.TAGS["2026.1"]


def test_a_hop_moves_identity_then_core_then_compute():
    result = releases.plan(dict(OLD), "2026.1")
    assert result["to"] == "2026.1" and set(result["from"].values()) == {"2025.2"}
    assert [(step["phase"], sorted(step["services"])) for step in result["steps"]] == [
        ("identity", ["keystone"]), ("core", ["glance", "placement"]), ("compute", ["cinder", "neutron", "nova"])]
    assert result["steps"][0]["services"]["keystone"] == {"from": "28.0.0", "to": "29.0.0"}


def test_a_plan_made_again_after_some_steps_starts_at_the_first_step_left():
    tags = dict(OLD, keystone=NEW["keystone"], glance=NEW["glance"])  # interrupted inside core
    steps = releases.plan(tags, "2026.1")["steps"]
    assert [(step["phase"], sorted(step["services"])) for step in steps] == [
        ("core", ["placement"]), ("compute", ["cinder", "neutron", "nova"])]
    assert releases.plan(dict(NEW), "2026.1")["steps"] == []


def test_a_cluster_without_some_services_moves_those_it_has_and_ignores_the_optional_ones():
    tags = {"keystone": OLD["keystone"], "glance": OLD["glance"], "cortex": "0.5.0"}
    steps = releases.plan(tags, "2026.1")["steps"]
    assert [sorted(step["services"]) for step in steps] == [["keystone"], ["glance"]]


def test_a_downgrade_a_skip_and_an_unknown_tag_are_refused_together_naming_both_releases(monkeypatch):
    tags = dict(NEW, nova=OLD["nova"], cinder="26.0.0")
    with pytest.raises(InputError) as raised:
        releases.plan(tags, "2025.2", subject="ControlPlane openstack/controlplane")
    problems = raised.value.problems
    assert "ControlPlane openstack/controlplane services.cinder.image.tag: cinder runs '26.0.0', the tag of no " \
           "release this collection knows (2025.2, 2026.1)" in problems
    assert any(p.startswith("ControlPlane openstack/controlplane services.keystone.image.tag: keystone runs 2026.1; "
                            "a downgrade to 2025.2 is not possible") for p in problems)
    assert not any("nova" in p for p in problems)  # on the target already
    later = dict((service, "%d.0.0" % (int(tag.split(".")[0]) + 1)) for service, tag in NEW.items())
    monkeypatch.setitem(releases.TAGS, "2026.2", later)
    with pytest.raises(InputError, match=r"services.keystone.image.tag: keystone runs 2025.2; 2026.2 skips 2026.1: "
                                         r"move one release at a time"):
        releases.plan(dict(OLD), "2026.2")
    assert [sorted(step["services"]) for step in releases.plan(dict(NEW), "2026.2")["steps"]][0] == ["keystone"]


@pytest.mark.parametrize("target, message", [
    ("2026.3", "'2026.3' is no OpenStack release"),
    ("latest", "'latest' is no OpenStack release"),
    ("2024.2", "2024.2 is not a release this collection knows"),
])
def test_a_target_that_is_no_known_release_is_refused(target, message):
    with pytest.raises(InputError, match=message):
        releases.plan(dict(OLD), target)


def test_release_names_and_successors():
    assert releases.parse("2025.2") == (2025, 2) and releases.parse("2025.3") is None
    assert releases.successor("2025.2") == "2026.1" and releases.successor("2026.1") == "2026.2"
    assert releases.release_of("keystone", "29.0.0") == "2026.1" and releases.release_of("keystone", "1") is None
