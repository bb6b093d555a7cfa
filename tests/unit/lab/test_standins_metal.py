# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The metal-operator stand-in against an in-memory API: what metal-operator v0.7.0 writes for a refused
login, a probe that never reports, readiness-rule taints and maintenance.

The lab tests (tests/integration/test_lab_standins.py, test_lab_metal.py) drive it against the real API servers.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os
import sys

from conftest import REPO
from test_standins_rook import FakeKube, Settings  # pylint: disable=import-error

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import loop, metal, settings  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore  # noqa: E402

GV = metal.GV


class Fixed:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


def operator(tmp_path, monkeypatch, standins=None):
    (tmp_path / "bmc-rack-x").write_text("right-password\n")
    monkeypatch.setattr(settings.config, "bmc_password_file", lambda name: tmp_path / ("bmc-%s" % name))
    op = metal.MetalOperator.__new__(metal.MetalOperator)
    loop.Controller.__init__(op)
    op.kube = FakeKube()
    op.settings = Settings(dict({"delays": {k: 0 for k in settings.DEFAULT_DELAYS}}, **(standins or {})))
    op.machines = Fixed(settings.Machines({"rack": {"credentials": "rack-x", "username": "admin"},
                                           "bmcs": {"rack-bmc": {"systems": [{}]}}}))
    op.log = lambda message: None
    return op


def url(plural, namespace=None):
    return metal.path(GV, plural, namespace)


def add_bmc(op, name, password, username="admin"):
    data = {"username": base64.b64encode(username.encode()).decode(),
            "password": base64.b64encode(password.encode()).decode()}
    op.kube.create(url("bmcsecrets"), {"apiVersion": GV, "kind": "BMCSecret", "metadata": {"name": name + "-s"},
                                       "data": data})
    return op.kube.create(url("bmcs"), {
        "apiVersion": GV, "kind": "BMC", "metadata": {"name": name, "labels": {"pool": "p"}},
        "spec": {"access": {"ip": "192.0.2.1", "macAddress": "aa:bb:cc:00:00:01"},
                 "bmcSecretRef": {"name": name + "-s"}, "protocol": {"name": "Redfish"}}})


def get(op, plural, name, namespace=None):
    return op.kube.get(metal.path(GV, plural, namespace, name))


def passes(op, count=12):
    for unused in range(count):
        op.reconcile()


def test_the_racks_bmc_refuses_a_wrong_password_as_metal_operator_reports_a_401(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "rack-bmc", "wrong-password")
    passes(op)
    bmc = get(op, "bmcs", "rack-bmc")
    ready = next(c for c in bmc["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "AuthenticationFailed", "BMC credentials are invalid")
    assert "state" not in bmc["status"]  # upstream leaves the state as it was
    assert not op.kube.list(url("servers"))
    result = evaluate(bmc)
    assert result.terminal and "reason AuthenticationFailed: BMC credentials are invalid" in result.missing[0]


def test_a_rotated_password_keeps_the_bmc_enabled_but_not_ready(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "rack-bmc", "right-password")
    passes(op)
    bmc = get(op, "bmcs", "rack-bmc")
    assert bmc["status"]["state"] == "Enabled" and evaluate(bmc).ready
    (tmp_path / "bmc-rack-x").write_text("rotated-password\n")  # the rack's password changes
    passes(op)
    bmc = get(op, "bmcs", "rack-bmc")
    assert bmc["status"]["state"] == "Enabled"
    result = evaluate(bmc)
    assert not result.ready and result.terminal


def test_an_unlisted_bmc_takes_any_credentials(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "test-bmc", "anything")
    passes(op)
    assert get(op, "bmcs", "test-bmc")["status"]["state"] == "Enabled"
    assert get(op, "servers", "test-bmc-system-0")["status"]["state"] == "Available"


def test_a_server_without_probe_falls_back_to_initial_and_never_errs(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch, {"servers_without_probe": ["test-bmc-system-0"]})
    add_bmc(op, "test-bmc", "anything")
    states = []
    for unused in range(40):
        op.reconcile()
        state = (get(op, "servers", "test-bmc-system-0") or {}).get("status", {}).get("state")
        if state and (not states or states[-1] != state):
            states.append(state)
    assert "Error" not in states and "Available" not in states
    # Initial -> Discovery -> Initial -> Discovery ...: discovery starts over, endlessly.
    assert states[:4] == ["Initial", "Discovery", "Initial", "Discovery"]


def rule(name, conditions, mode="Continuous", key="example.com/unhealthy"):
    return {"apiVersion": GV, "kind": "ServerReadinessRule", "metadata": {"name": name},
            "spec": {"serverSelector": {"matchLabels": {"pool": "p"}}, "enforcementMode": mode,
                     "conditions": [{"type": t, "requiredStatus": s} for t, s in conditions.items()],
                     "taint": {"key": key, "effect": "NoBind"}}}


def claim(name):
    return {"apiVersion": GV, "kind": "ServerClaim", "metadata": {"name": name, "namespace": "c"},
            "spec": {"power": "On", "image": "gl", "serverSelector": {"matchLabels": {"pool": "p"}}}}


def test_a_readiness_rule_taints_the_server_and_the_claim_stays_unbound(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "test-bmc", "anything")
    passes(op)
    op.kube.create(url("serverreadinessrules"), rule("health", {"HealthCheck": "True"}))
    passes(op)
    server = get(op, "servers", "test-bmc-system-0")
    assert server["spec"]["taints"] == [{"key": "example.com/unhealthy", "effect": "NoBind"}]
    assert get(op, "serverreadinessrules", "health")["metadata"]["finalizers"] == [metal.RULE_FINALIZER]
    summary = ironcore.server_summary(server)
    assert ironcore.unclaimable_reason(summary) == "tainted example.com/unhealthy:NoBind"
    op.kube.create(url("serverclaims", "c"), claim("c1"))
    passes(op)
    assert get(op, "serverclaims", "c1", "c")["status"]["phase"] == "Unbound"
    # The condition turns True: the taint goes and the claim binds.
    op.kube.patch(metal.object_path(GV, "servers", server), server, {"status": {"conditions": [
        {"type": "HealthCheck", "status": "True", "reason": "Ok", "message": "", "lastTransitionTime": "x"}]}})
    passes(op, 20)
    assert not get(op, "servers", "test-bmc-system-0")["spec"].get("taints")
    assert get(op, "serverclaims", "c1", "c")["status"]["phase"] == "Bound"


def test_a_server_maintenance_holds_the_server_back_from_claims(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "test-bmc", "anything")
    passes(op)
    maintenance = op.kube.create(url("servermaintenances", "c"), {
        "apiVersion": GV, "kind": "ServerMaintenance", "metadata": {"name": "m", "namespace": "c"},
        "spec": {"serverRef": {"name": "test-bmc-system-0"}, "policy": "Enforced"}})
    op.kube.create(url("serverclaims", "c"), claim("c1"))
    passes(op)
    assert get(op, "serverclaims", "c1", "c")["status"]["phase"] == "Unbound"
    summaries = [ironcore.server_summary(get(op, "servers", "test-bmc-system-0"))]
    assert not ironcore.is_claimable(summaries[0], ironcore.maintained_servers([maintenance]))
    op.kube.delete(metal.object_path(GV, "servermaintenances", maintenance))
    passes(op, 20)
    assert get(op, "serverclaims", "c1", "c")["status"]["phase"] == "Bound"


def maintenance(name, policy="Enforced", **spec):
    return {"apiVersion": GV, "kind": "ServerMaintenance", "metadata": {"name": name, "namespace": "c"},
            "spec": dict({"serverRef": {"name": "test-bmc-system-0"}, "policy": policy}, **spec)}


def end_maintenance(op, name):
    """The API server's part of a deletion (FakeKube's): deletionTimestamp, and the object gone once the stand-in
    removed the last finalizer."""
    obj = get(op, "servermaintenances", name, "c")
    op.kube.delete(metal.object_path(GV, "servermaintenances", obj))
    op.reconcile()
    assert get(op, "servermaintenances", name, "c") is None


def server_states(op, count):
    states = []
    for unused in range(count):
        op.reconcile()
        state = get(op, "servers", "test-bmc-system-0")["status"]["state"]
        if not states or states[-1] != state:
            states.append(state)
    return states


def test_a_maintenance_takes_an_unclaimed_server_and_its_end_starts_discovery_over(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "test-bmc", "anything")
    passes(op)
    op.kube.create(url("servermaintenances", "c"), maintenance("m", serverPower="On"))
    passes(op)
    obj = get(op, "servermaintenances", "m", "c")
    assert obj["status"]["state"] == "InMaintenance" and obj["metadata"]["finalizers"] == [metal.MAINTENANCE_FINALIZER]
    server = get(op, "servers", "test-bmc-system-0")
    assert server["status"]["state"] == "Maintenance" and server["status"]["powerState"] == "On"
    assert server["spec"]["serverMaintenanceRef"] == {"namespace": "c", "name": "m"}
    assert server["spec"]["power"] == "On"  # the maintenance's serverPower
    assert ironcore.unclaimable_reason(ironcore.server_summary(server)) == "in maintenance"
    end_maintenance(op, "m")
    assert "serverMaintenanceRef" not in get(op, "servers", "test-bmc-system-0")["spec"]
    # handleMaintenanceState: no ref, unclaimed -> Initial, so the discovery runs again.
    assert server_states(op, 30)[:3] == ["Initial", "Discovery", "Available"]
    server = get(op, "servers", "test-bmc-system-0")
    assert server["status"]["state"] == "Available" and server["status"]["powerState"] == "Off"


def test_an_owner_approval_maintenance_waits_for_the_claims_approval(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "test-bmc", "anything")
    passes(op)
    op.kube.create(url("serverclaims", "c"), claim("c1"))
    passes(op, 20)
    assert get(op, "servers", "test-bmc-system-0")["status"]["state"] == "Reserved"
    op.kube.create(url("servermaintenances", "c"), maintenance("m", "OwnerApproval"))
    passes(op)
    assert get(op, "servermaintenances", "m", "c")["status"]["state"] == "Pending"
    bound = get(op, "serverclaims", "c1", "c")
    assert bound["metadata"]["labels"][metal.MAINTENANCE_NEEDED] == "true"
    assert get(op, "servers", "test-bmc-system-0")["status"]["state"] == "Reserved"
    op.kube.patch(metal.object_path(GV, "serverclaims", bound), bound,
                  {"metadata": {"labels": {metal.MAINTENANCE_APPROVED: "true"}}})
    passes(op)
    assert get(op, "servermaintenances", "m", "c")["status"]["state"] == "InMaintenance"
    server = get(op, "servers", "test-bmc-system-0")
    assert server["status"]["state"] == "Maintenance" and "power" not in server["spec"]  # no serverPower
    end_maintenance(op, "m")
    passes(op)
    assert get(op, "servers", "test-bmc-system-0")["status"]["state"] == "Reserved"
    labels = get(op, "serverclaims", "c1", "c")["metadata"].get("labels") or {}
    assert metal.MAINTENANCE_NEEDED not in labels and metal.MAINTENANCE_APPROVED not in labels
