# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The service operators' stand-ins play a new image tag of a running service as upstream's upgrade flow."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import operators  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness  # noqa: E402


def glance(tag, generation=1, status=None):
    return {"apiVersion": "glance.openstack.c5c3.io/v1alpha1", "kind": "Glance",
            "metadata": {"name": "glance", "namespace": "openstack", "generation": generation, "uid": "u"},
            "spec": {"image": {"repository": "ghcr.io/c5c3/glance", "tag": tag}}, "status": status or {}}


def conditions(status):
    return dict((c["type"], (c["status"], c["reason"], c["message"])) for c in status["conditions"])


def test_a_first_rollout_installs_the_tag_and_is_ready():
    status = operators.KINDS["Glance"].status(glance("31.0.0"), "ready", {}, None)
    assert status["installedRelease"] == "31.0.0" and status["targetRelease"] is None  # null: removed
    assert "upgradePhase" not in status  # only upstream's Keystone has one
    assert readiness.evaluate(dict(glance("31.0.0"), status=status)).ready


def test_a_new_tag_of_a_running_service_is_an_upgrade_until_it_is_ready_again():
    running = operators.KINDS["Glance"].status(glance("31.0.0"), "ready", {}, None)
    moved = glance("32.0.0", generation=2, status=running)
    assert operators.upgrade_of(moved) == ("31.0.0", "32.0.0")
    status = operators.KINDS["Glance"].status(moved, "progressing", {}, None)
    assert conditions(status)["DatabaseReady"] == ("False", "MigrateInProgress", "Migrate phase running: 31.0.0 -> 32.0.0")
    assert conditions(status)["Ready"][:2] == ("False", "NotAllReady")
    assert status["targetRelease"] == "32.0.0"
    assert not readiness.evaluate(dict(moved, status=dict(running, **status))).ready
    done = operators.KINDS["Glance"].status(dict(moved, status=dict(running, **status)), "ready", {}, None)
    assert (done["installedRelease"], done["targetRelease"]) == ("32.0.0", None)
    assert readiness.evaluate(dict(moved, status=dict(running, **done))).ready


def test_a_lower_major_version_is_refused_as_a_downgrade_even_after_the_delay():
    running = operators.KINDS["Glance"].status(glance("32.0.0"), "ready", {}, None)
    back = glance("31.0.0", generation=2, status=running)
    status = operators.KINDS["Glance"].status(back, "ready", {}, None)
    assert conditions(status)["DatabaseReady"][:2] == ("False", "DowngradeNotSupported")
    assert status.get("installedRelease", running["installedRelease"]) == "32.0.0"
    assert not readiness.evaluate(dict(back, status=dict(running, **status))).ready


def test_a_failure_during_an_upgrade_is_the_database_steps_terminal_reason():
    running = operators.KINDS["Glance"].status(glance("31.0.0"), "ready", {}, None)
    moved = glance("32.0.0", generation=2, status=running)
    status = operators.KINDS["Glance"].status(moved, "failed", {"reason": "MigrateFailed", "message": "boom"}, None)
    assert conditions(status)["DatabaseReady"] == ("False", "MigrateFailed", "boom")
    assert conditions(status)["Ready"][:2] == ("False", "NotAllReady") and status["targetRelease"] == "32.0.0"


def test_the_keystone_stand_in_reports_each_upgrade_phase_in_upstreams_reasons():
    from regionlab.standins import keystone_operator as ko  # noqa: E402  pylint: disable=import-outside-toplevel
    upgrade = {"tag": "29.0.0", "from": "28.0.0", "phase": "Expanding", "error": None}
    assert ko.upgrade_condition(upgrade) == ("ExpandInProgress", "Expanding phase running: 28.0.0 -> 29.0.0")
    assert ko.upgrade_condition(dict(upgrade, phase="RollingUpdate"))[0] == "UpgradeRollingUpdate"
    assert ko.upgrade_condition(dict(upgrade, phase="Migrating", error="exit 2"))[0] == "MigrateFailed"
    assert ko.upgrade_condition(dict(upgrade, target_changed="30.0.0"))[0] == "UpgradeTargetChanged"
    assert ko.upgrade_condition(dict(upgrade, tag="27.0.0", refused=True))[0] == "DowngradeNotSupported"

    class Tracker(object):
        class instance(object):  # noqa: N801
            @staticmethod
            def state():
                return {"installed_release": "28.0.0"}
        upgrade = None
    assert ko.release_status(Tracker) == {"installedRelease": "28.0.0", "targetRelease": None, "upgradePhase": None}
    Tracker.upgrade = upgrade
    assert ko.release_status(Tracker) == {"installedRelease": "28.0.0", "targetRelease": "29.0.0",
                                          "upgradePhase": "Expanding"}
