# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gardenlet stand-in's care controller (care/health.go, care/constraints.go of gardener v1.146.3) as pure
values; tests/integration/test_lab_standins.py drives it against the lab's garden."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import sys

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import gardenlet  # noqa: E402  pylint: disable=wrong-import-position

WORKERS = {"provider": {"workers": [{"name": "pool"}]}}


def shoot(last=None, spec=None, **status):
    if last:
        status["lastOperation"] = {"type": last[0], "state": last[1]}
    return {"metadata": {"name": "s", "namespace": "garden-p", "uid": "u"}, "spec": spec or dict(WORKERS),
            "status": status}


def test_a_healthy_shoot_has_every_condition_true_and_only_the_two_required_constraints():
    conditions, constraints = gardenlet.care_values(shoot(("Reconcile", "Succeeded")), True)
    assert list(conditions) == ["APIServerAvailable", "ControlPlaneHealthy", "ObservabilityComponentsHealthy",
                                "EveryNodeReady", "SystemComponentsHealthy"]
    assert {v[0] for v in conditions.values()} == {"True"}
    assert constraints == {t: ("True", "NoProblematicWebhooks", "All webhooks are properly configured.")
                           for t in ("HibernationPossible", "MaintenancePreconditionsSatisfied")}


def test_a_hibernated_shoot_has_four_constraints_not_checked():
    conditions, constraints = gardenlet.care_values(
        shoot(("Reconcile", "Succeeded"), dict(WORKERS, hibernation={"enabled": True})), True)
    assert set(conditions.values()) == {("True", "ConditionNotChecked", "Shoot cluster has been hibernated.")}
    assert list(constraints) == ["HibernationPossible", "MaintenancePreconditionsSatisfied",
                                 "CACertificateValiditiesAcceptable", "CRDsWithProblematicConversionWebhooks"]
    assert set(constraints.values()) == {("True", "ConstraintNotChecked", "Shoot cluster has been hibernated.")}


def test_a_shoot_being_created_is_pardoned_and_a_failed_reconcile_is_not():
    conditions, constraints = gardenlet.care_values(shoot(("Create", "Processing")), False)
    assert conditions["APIServerAvailable"][:2] == ("Progressing", "APIServerDown")
    assert conditions["EveryNodeReady"] == ("Unknown", "ConditionCheckError",
                                            "Shoot control plane has not been fully created yet.")
    assert set(constraints.values()) == {
        ("Progressing", "ConstraintNotChecked", "Shoot control plane is not running at the moment.")}
    conditions, unused = gardenlet.care_values(shoot(("Delete", "Succeeded")), False)
    assert conditions["APIServerAvailable"][0] == "False"
    assert conditions["SystemComponentsHealthy"][2] == "Shoot control plane has already been or is about to be deleted."


def test_missing_conditions_start_initialized_and_others_stay():
    obj = shoot(("Create", "Processing"), constraints=[
        {"type": "Other", "status": "True", "reason": "x", "message": "y"}])
    out, changed = gardenlet._with_conditions(obj, {"HibernationPossible": gardenlet.INITIALIZED}, "T", "constraints",
                                              gardenlet.CONSTRAINT_TYPES)
    assert changed and out[0]["type"] == "Other"
    assert out[1] == {"type": "HibernationPossible", "status": "Unknown", "reason": "ConditionInitialized",
                      "message": "The condition has been initialized but its semantic check has not been "
                                 "performed yet.", "lastTransitionTime": "T", "lastUpdateTime": "T"}
    again, changed = gardenlet._with_conditions(dict(obj, status={"constraints": out}),
                                                {"HibernationPossible": gardenlet.INITIALIZED}, "U", "constraints",
                                                gardenlet.CONSTRAINT_TYPES)
    assert not changed and again == out
