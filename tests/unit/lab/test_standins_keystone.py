# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The keystone-operator stand-in's SecretsReady, as upstream's reconcileSecrets decides it.

secrets_verdict is pure (it reads through the function it is given); the pass is run against an
in-memory API server to show that nothing after SecretsReady happens until the Secrets are there.
The lab tests (tests/integration/test_lab_standins_keystone.py) do the same against a real API
server and a real Keystone.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import copy
import os
import sys

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import keystone_operator as ko  # noqa: E402  pylint: disable=wrong-import-position

NS = "ks-unit"


def b64(text):
    return base64.b64encode(text.encode()).decode()


def keystone(**spec):
    base = {"database": {"secretRef": {"name": "keystone-db-credentials"}, "database": "keystone"},
            "bootstrap": {"adminPasswordSecretRef": {"name": "keystone-admin-credentials", "key": "password"},
                          "region": "lab"}}
    base.update(spec)
    return {"apiVersion": ko.GV, "kind": "Keystone",
            "metadata": {"name": "keystone", "namespace": NS, "uid": "ks-uid", "generation": 1,
                         "resourceVersion": "1", "finalizers": [ko.FINALIZER], "managedFields": []},
            "spec": base}


def secret(name, **data):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS},
            "data": {k: b64(v) for k, v in data.items()}}


def ready(kind, name, status="True"):
    return {"kind": kind, "metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": status}]}}


def reader(*objects):
    found = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    return lambda kind, namespace, name: copy.deepcopy(found.get((kind, name)))


BOTH = (secret("keystone-db-credentials", username="keystone", password="p" * 32),
        secret("keystone-admin-credentials", password="a" * 32))


def test_both_secrets_with_upstreams_keys_are_enough():
    assert ko.secrets_verdict(keystone(), reader(*BOTH)) == ("True", "SecretsAvailable", "")
    # A key that is there counts, whatever its value (upstream's IsSecretReady looks at the keys only).
    empty = secret("keystone-db-credentials", username="keystone", password="")
    assert ko.secrets_verdict(keystone(), reader(empty, BOTH[1]))[0] == "True"


def test_the_database_credentials_come_first_and_their_external_secret_says_why():
    verdict = ko.secrets_verdict(keystone(), reader(BOTH[1]))
    assert verdict == ("False", "WaitingForDBCredentials",
                       "Database credentials ExternalSecret %s/keystone-db-credentials not found yet" % NS)
    # Without `password` (or `username`) the Secret does not count.
    no_password = secret("keystone-db-credentials", username="keystone")
    assert ko.secrets_verdict(keystone(), reader(no_password, BOTH[1])) == verdict
    synced = ready("ExternalSecret", "keystone-db-credentials")
    assert ko.secrets_verdict(keystone(), reader(no_password, synced, BOTH[1])) == (
        "False", "WaitingForDBCredentials", "Database credentials Secret exists but is missing expected keys")
    syncing = ready("ExternalSecret", "keystone-db-credentials", "False")
    assert ko.secrets_verdict(keystone(), reader(syncing, BOTH[1])) == (
        "False", "WaitingForDBCredentials", "Waiting for ESO to sync database credentials from OpenBao")
    # Both missing: the database's is named (upstream's gates run in order and stop at the first).
    assert ko.secrets_verdict(keystone(), reader())[1] == "WaitingForDBCredentials"


def test_then_the_admin_password():
    assert ko.secrets_verdict(keystone(), reader(BOTH[0])) == (
        "False", "WaitingForAdminCredentials",
        "Admin credentials ExternalSecret %s/keystone-admin-credentials not found yet" % NS)
    other_key = secret("keystone-admin-credentials", value="a" * 32)
    assert ko.secrets_verdict(keystone(), reader(BOTH[0], other_key))[1] == "WaitingForAdminCredentials"


def test_a_named_secret_store_must_be_ready_first():
    store = {"kind": "ClusterSecretStore", "name": "openbao-cluster-store"}
    assert ko.secrets_verdict(keystone(secretStoreRef=store), reader(*BOTH)) == (
        "False", "SecretStoreNotReady",
        'ClusterSecretStore "openbao-cluster-store" is not ready; upstream secret backend unreachable')
    assert ko.secrets_verdict(keystone(secretStoreRef=store),
                              reader(ready("ClusterSecretStore", "openbao-cluster-store"), *BOTH))[0] == "True"
    tenant = {"kind": "SecretStore", "name": "tenant-store"}
    seen = []

    def read(kind, namespace, name):
        seen.append((kind, namespace, name))
        return ready(kind, name) if kind == "SecretStore" else reader(*BOTH)(kind, namespace, name)
    assert ko.secrets_verdict(keystone(secretStoreRef=tenant), read)[0] == "True"
    assert seen[0] == ("SecretStore", NS, "tenant-store")  # a namespaced store: the Keystone's namespace


class FakeKube:
    """The objects the stand-in reads; its status patches are kept."""

    def __init__(self, objects):
        self.objects = objects
        self.patches = []

    def get(self, url):
        parts = url.strip("/").split("/")
        return copy.deepcopy(self.objects.get((parts[-2], parts[-1])))

    def patch(self, url, obj, patch, subresource=None):
        self.patches.append((subresource, copy.deepcopy(patch)))
        live = copy.deepcopy(obj)
        live.setdefault("status", {}).update(patch.get("status") or {})
        return live


@pytest.fixture
def operator(monkeypatch):
    monkeypatch.setattr(ko, "Kube", lambda cluster, manager: FakeKube({}))
    monkeypatch.setattr(ko, "Waker", lambda *args: None)
    monkeypatch.setattr(ko.keystones, "read_registry", dict)
    op = ko.KeystoneOperator(cluster=None)
    op.tracker_for = lambda cr: pytest.fail("nothing after SecretsReady may run without the Secrets")
    return op


def test_nothing_runs_until_the_secrets_are_there(operator):
    operator.kube.objects[("secrets", "keystone-admin-credentials")] = BOTH[1]
    operator.reconcile_keystone(keystone())
    (subresource, patch), = operator.kube.patches
    assert subresource == "status"
    conditions = {c["type"]: c for c in patch["status"]["conditions"]}
    assert set(conditions) == {"SecretsReady", "Ready"}
    assert (conditions["SecretsReady"]["status"], conditions["SecretsReady"]["reason"]) == (
        "False", "WaitingForDBCredentials")
    assert conditions["SecretsReady"]["observedGeneration"] == 1
    assert (conditions["Ready"]["status"], conditions["Ready"]["reason"]) == ("False", "NotAllReady")


def test_a_missing_key_later_turns_secrets_ready_false_and_keeps_the_rest(operator):
    """A Keystone that was Ready: SecretsReady goes False, Ready with it; the other conditions and the endpoint stay,
    as upstream's short-circuited pipeline leaves them (its pods keep running)."""
    cr = keystone()
    steps = ["SecretsReady"] + ko.SUB_CONDITIONS[1:] + ["Ready"]
    cr["status"] = {"observedGeneration": 1, "endpoint": "http://127.0.0.1:26500/v3",
                    "conditions": [{"type": t, "status": "True", "reason": "R", "message": "",
                                    "observedGeneration": 1} for t in steps]}
    operator.kube.objects[("secrets", "keystone-db-credentials")] = secret("keystone-db-credentials",
                                                                           username="keystone")
    operator.kube.objects[("secrets", "keystone-admin-credentials")] = BOTH[1]
    operator.reconcile_keystone(cr)
    (subresource, patch), = operator.kube.patches
    assert subresource == "status"
    conditions = {c["type"]: c for c in patch["status"]["conditions"]}
    assert [c["type"] for c in patch["status"]["conditions"]] == steps
    assert conditions["SecretsReady"]["status"] == "False" and conditions["Ready"]["status"] == "False"
    assert all(conditions[t]["status"] == "True" for t in ko.SUB_CONDITIONS[1:])
    assert "endpoint" not in patch["status"]  # a merge patch: the endpoint stays as it is


@pytest.mark.parametrize("spec, expected", [
    (None, (2, 1)),
    ({}, (2, 1)),
    ({"uwsgi": {}}, (2, 1)),
    ({"uwsgi": {"processes": 4, "threads": 2}}, (4, 2)),
    ({"uwsgi": {"processes": 0, "threads": -1}}, (2, 1)),
])
def test_the_api_server_runs_spec_uwsgi_concurrency_with_upstreams_defaults(spec, expected):
    from regionlab.standins import keystones  # pylint: disable=import-outside-toplevel
    assert keystones.concurrency(spec) == expected
