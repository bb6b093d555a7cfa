# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's gardener-apiserver Shoot strategy for `gardener.cloud/operation` (strategy.go mustIncreaseGeneration of
gardener v1.146.3) as pure values; tests/integration/test_lab_shoot_operation.py drives the webhook on the garden."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import shoot_admission as sa  # noqa: E402  pylint: disable=wrong-import-position

KEY = "/metadata/annotations/gardener.cloud~1operation"


def shoot(state="Succeeded", annotation=None, bumps=None, spec=None):
    obj = {"metadata": {"name": "s", "namespace": "garden-p", "annotations": {}},
           "spec": spec or {"purpose": "evaluation"}, "status": {}}
    if state:
        obj["status"]["lastOperation"] = {"type": "Reconcile", "state": state}
    if annotation is not None:
        obj["metadata"]["annotations"][sa.OPERATION] = annotation
    if bumps is not None:
        obj[sa.LAB_FIELD] = bumps
    return obj


@pytest.mark.parametrize("state,annotation,bump,left", [
    ("Succeeded", "reconcile", True, None),
    ("Error", "reconcile", True, None),
    ("Processing", "reconcile", True, None),
    ("Failed", "retry", True, None),
    ("Failed", "reconcile", False, "reconcile"),
    ("Succeeded", "retry", False, "retry"),
    ("Error", "retry", False, "retry"),
    (None, "reconcile", False, "reconcile"),
    (None, "retry", False, "retry"),
    # ';'-separated operations: reconcile is taken out, the rest (not played here) stays.
    ("Succeeded", "reconcile;rotate-ca-start", True, "rotate-ca-start"),
    ("Succeeded", " reconcile ; reconcile ", True, None),
    ("Failed", "retry;reconcile", False, "retry;reconcile"),
    # Not played: neither bumped nor removed.
    ("Succeeded", "rotate-ssh-keypair", False, "rotate-ssh-keypair"),
    # An empty value is no operation: upstream removes it once there is a lastOperation.
    ("Succeeded", "", False, None),
    ("Failed", "", False, None),
])
def test_must_increase_as_upstream(state, annotation, bump, left):
    old = shoot(state)
    assert sa.must_increase(old, shoot(state, annotation)) == (bump, left)


def test_a_spec_change_skips_the_annotation():
    old, new = shoot(), shoot(annotation="reconcile", spec={"purpose": "testing"})
    assert sa.must_increase(old, new) == (False, "reconcile")
    assert sa.patch(old, new) == []  # the CRD bumps for the spec itself


def test_confined_rollouts_count_only_a_hibernation_change():
    confined = {"purpose": "evaluation", "maintenance": {"confineSpecUpdateRollout": True}}
    old = shoot(spec=confined)
    assert sa.must_increase(old, shoot(annotation="reconcile", spec=dict(confined, purpose="testing"))) == (True, None)
    hibernated = dict(confined, hibernation={"enabled": True})
    assert sa.must_increase(old, shoot(annotation="reconcile", spec=hibernated)) == (False, "reconcile")


def test_the_status_is_the_stored_one():
    new = shoot("Failed", "retry")
    assert sa.must_increase(shoot("Succeeded"), new) == (False, "retry")


def test_patch_bumps_the_lab_field_and_removes_the_annotation():
    assert sa.patch(shoot(), shoot(annotation="reconcile")) == [
        {"op": "remove", "path": KEY}, {"op": "add", "path": "/" + sa.LAB_FIELD, "value": 1}]
    assert sa.patch(shoot(bumps=4), shoot(annotation="reconcile", bumps=4))[-1]["value"] == 5
    assert sa.patch(shoot(), shoot(annotation="reconcile;rollout-workers=a")) == [
        {"op": "replace", "path": KEY, "value": "rollout-workers=a"},
        {"op": "add", "path": "/" + sa.LAB_FIELD, "value": 1}]


def test_patch_keeps_the_lab_field_where_the_client_dropped_or_changed_it():
    assert sa.patch(shoot(bumps=3), shoot()) == [{"op": "add", "path": "/" + sa.LAB_FIELD, "value": 3}]
    assert sa.patch(shoot(bumps=3), shoot(bumps=9)) == [{"op": "add", "path": "/" + sa.LAB_FIELD, "value": 3}]
    assert sa.patch(shoot(), shoot(bumps=2)) == [{"op": "remove", "path": "/" + sa.LAB_FIELD}]
    assert sa.patch(shoot(bumps=3), shoot(bumps=3)) == []
    assert sa.patch(shoot("Failed", "reconcile"), shoot("Failed", "reconcile")) == []


def test_review_answers_updates_of_shoots_only():
    request = {"uid": "u1", "kind": {"group": "core.gardener.cloud", "version": "v1beta1", "kind": "Shoot"},
               "operation": "UPDATE", "oldObject": shoot(), "object": shoot(annotation="reconcile")}
    out = sa.review({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    response = out["response"]
    assert response["uid"] == "u1" and response["allowed"] is True and response["patchType"] == "JSONPatch"
    assert json.loads(base64.b64decode(response["patch"]))[0] == {"op": "remove", "path": KEY}
    for other in ({"subResource": "status"}, {"operation": "CREATE"}):
        out = sa.review({"request": dict(request, **other)})
        assert out["response"] == {"uid": "u1", "allowed": True}


PROFILE = {"spec": {"kubernetes": {"versions": [
    {"version": "1.36.0", "classification": "preview"}, {"version": "1.35.1"},
    {"version": "1.34.5", "classification": "deprecated"}, {"version": "1.34.3", "classification": "supported"},
    {"version": "1.33.4", "classification": "supported"},
    {"version": "1.32.8", "classification": "supported", "expirationDate": "2020-01-01T00:00:00Z"}]}}}


def versioned(version):
    return {"metadata": {"name": "s"}, "spec": {"kubernetes": {"version": version}}}


def version_review(operation, old, new):
    request = {"uid": "u", "kind": {"kind": "Shoot"}, "operation": operation,
               "oldObject": versioned(old) if old else None, "object": versioned(new)}
    response = sa.review({"request": request}, lambda shoot: PROFILE)["response"]
    patch = json.loads(base64.b64decode(response["patch"])) if response.get("patch") else []
    return response, [op for op in patch if op["path"] == "/spec/kubernetes/version"]


def test_a_short_version_becomes_the_newest_supported_patch_of_its_minor():
    assert version_review("CREATE", None, "1.34")[1] == [{"op": "replace", "path": "/spec/kubernetes/version",
                                                          "value": "1.34.3"}]
    assert version_review("UPDATE", "1.33.4", "1.33")[1][0]["value"] == "1.33.4"
    response, unused = version_review("CREATE", None, "1.36")
    assert response["allowed"] is False and "couldn't find a suitable version for 1.36" in response["status"]["message"]
    response, ops = version_review("CREATE", None, "1.36.0")  # a preview version named explicitly
    assert response["allowed"] is True and ops == []


def test_gardeners_refusals_of_a_version_change():
    expected = {
        ("UPDATE", "1.34.3", "1.33.4"): "spec.kubernetes.version: Forbidden: kubernetes version downgrade is not supported",
        ("UPDATE", "1.33.4", "1.35.1"): "spec.kubernetes.version: Forbidden: kubernetes version upgrade cannot skip a "
                                        "minor version",
        ("UPDATE", "1.33.4", "1.34.4"): 'spec.kubernetes.version: Unsupported value: "1.34.4": supported values: '
                                        '"1.36.0 (preview)", "1.35.1", "1.34.5", "1.34.3", "1.33.4", "1.32.8"',
        ("CREATE", None, "1.32.8"): 'spec.kubernetes.version: Unsupported value: "1.32.8": supported values: '
                                    '"1.36.0 (preview)", "1.35.1", "1.34.5", "1.34.3", "1.33.4"',
    }
    for (operation, old, new), message in expected.items():
        response, unused = version_review(operation, old, new)
        assert response["allowed"] is False and response["status"]["message"] == message, (operation, old, new)
    for operation, old, new in (("UPDATE", "1.33.4", "1.34.5"), ("UPDATE", "1.32.8", "1.32.8"),
                                ("UPDATE", "1.32.8", "1.33.4"), ("CREATE", None, "1.35.1")):
        assert version_review(operation, old, new)[0]["allowed"] is True, (operation, old, new)
