# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot-operator stand-in against an in-memory API: a Pending ServerBootConfiguration becomes Ready, and
the probe agent of a machine booted for discovery registers with metal-operator's registry exactly when it would.

The lab tests (tests/integration/test_lab_standins.py) drive it beside the real metal-operator.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime
import os
import sys
import uuid

import requests
from conftest import REPO
from test_standins_rook import FakeKube, Settings  # pylint: disable=import-error

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import boot, loop, settings  # noqa: E402  pylint: disable=wrong-import-position

GV = boot.GV
NAMESPACE = "default"
REGISTRY = "http://registry.test"
NICS = [{"name": "eno1", "macAddress": "02:00:00:00:01:01", "ipAddresses": ["10.0.0.5"]},
        {"name": "eno2", "macAddress": "02:00:00:00:01:02"}]
MACHINES = {
    "defaults": {"system": {"manufacturer": "Lab Systems", "model": "LS-1000", "sku": "LS-1000-2S",
                            "biosVersion": "1.9.2", "totalSystemMemoryGiB": 256}},
    "rack": {"credentials": "rack-x", "username": "admin"},
    "bmcs": {"rack-bmc": {"address": "127.0.1.1:8000", "system": {"networkInterfaces": NICS}},
             "other-bmc": {"address": "127.0.1.2:8000"}}}


class Fixed:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


class Answer:
    def __init__(self, status_code, text=""):
        self.status_code = status_code
        self.text = text


class FakeRegistry:
    """metal-operator's registry as the stand-in's requests session sees it: GET /systems/<uuid> 404 until a
    POST /register of that systemUUID, then 200; every call recorded."""

    def __init__(self, post_status=201, error=None):
        self.calls = []
        self.systems = {}
        self.post_status = post_status
        self.error = error

    def get(self, url, timeout=None):
        self.calls.append(("GET", url, None))
        if self.error:
            raise self.error
        return Answer(200 if url.rsplit("/", 1)[-1] in self.systems else 404)

    def post(self, url, json=None, timeout=None):
        self.calls.append(("POST", url, json))
        if self.error:
            raise self.error
        if self.post_status in (200, 201):
            self.systems[json["systemUUID"]] = json
        return Answer(self.post_status, "registry says no")

    def posts(self):
        return [payload for method, url, payload in self.calls if method == "POST"]


def operator(tmp_path, monkeypatch, standins=None, registry=None):
    (tmp_path / "bmc-rack-x").write_text("right-password\n")
    monkeypatch.setattr(settings.config, "bmc_password_file", lambda name: tmp_path / ("bmc-%s" % name))
    monkeypatch.setattr(boot.metal, "registry_url", lambda: REGISTRY)
    op = boot.BootOperator.__new__(boot.BootOperator)
    loop.Controller.__init__(op)
    op.kube = FakeKube()
    op.settings = Settings(dict({"delays": {k: 0 for k in settings.DEFAULT_DELAYS}}, **(standins or {})))
    op.machines = Fixed(settings.Machines(MACHINES))
    op.registry = registry or FakeRegistry()
    op.logs = []
    op.log = op.logs.append
    return op


def url(plural, namespace=None):
    return boot.path(GV, plural, namespace)


def get(op, plural, name, namespace=None):
    return op.kube.get(boot.path(GV, plural, namespace, name))


def add_sbc(op, name, state="Pending", internal=True, annotations=None, status_manager=None):
    """A ServerBootConfiguration as metal-operator creates it for a discovery (type Internal)."""
    annotations = dict(annotations or {})
    if internal:
        annotations[boot.INTERNAL_TYPE[0]] = boot.INTERNAL_TYPE[1]
    meta = {"name": name, "namespace": NAMESPACE, "annotations": annotations}
    if status_manager:
        meta["managedFields"] = [
            {"manager": boot.metal.FIELD_MANAGER, "operation": "Update", "apiVersion": GV},
            {"manager": status_manager, "operation": "Update", "apiVersion": GV, "subresource": "status"}]
    return op.kube.create(url("serverbootconfigurations", NAMESPACE), {
        "apiVersion": GV, "kind": "ServerBootConfiguration", "metadata": meta,
        "spec": {"serverRef": {"name": name}, "image": "ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0"},
        "status": {"state": state}})


def add_bmc(op, name, ip="127.0.1.1", port=8000):
    return op.kube.create(url("bmcs"), {
        "apiVersion": GV, "kind": "BMC", "metadata": {"name": name},
        "spec": {"access": {"ip": ip, "macAddress": "aa:bb:cc:00:00:01"}, "bmcSecretRef": {"name": name + "-s"},
                 "protocol": {"name": "Redfish", "port": port}}})


def add_server(op, name, bmc="rack-bmc", machine="rack-bmc", state="Discovery", power="On", system_uuid=None):
    """A Server in discovery as metal-operator has it: its BMC, the machine's systemUUID and the discovery boot."""
    return op.kube.create(url("servers"), {
        "apiVersion": GV, "kind": "Server", "metadata": {"name": name},
        "spec": {"bmcRef": {"name": bmc}, "systemUUID": system_uuid or op.machines.get().system(machine)["systemUUID"],
                 "bootConfigurationRef": {"kind": "ServerBootConfiguration", "namespace": NAMESPACE, "name": name}},
        "status": {"state": state, "powerState": power}})


def discovery(op, name="rack-bmc-system-0", sbc_ready=True, **server):
    add_bmc(op, "rack-bmc")
    add_sbc(op, name, "Ready" if sbc_ready else "Pending")
    return add_server(op, name, **server)


def passes(op, count=3):
    for unused in range(count):
        op.reconcile()


def test_a_pending_boot_configuration_becomes_ready(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_sbc(op, "s1")
    add_sbc(op, "s2", internal=False, status_manager=boot.metal.FIELD_MANAGER)  # metal-operator wrote Pending
    passes(op, 1)
    assert get(op, "serverbootconfigurations", "s1", NAMESPACE)["status"]["state"] == "Ready"
    assert get(op, "serverbootconfigurations", "s2", NAMESPACE)["status"]["state"] == "Ready"
    writes = op.kube.writes
    passes(op)
    assert op.kube.writes == writes  # Ready stays Ready without another write


def test_a_boot_configuration_whose_status_another_manager_writes_is_left_alone(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_sbc(op, "foreign", status_manager="a-test-playing-boot-operator")
    add_sbc(op, "ignored", annotations={boot.OPERATION: "ignore"})
    add_sbc(op, "ours", status_manager=boot.MANAGER)
    passes(op)
    assert get(op, "serverbootconfigurations", "foreign", NAMESPACE)["status"]["state"] == "Pending"
    assert get(op, "serverbootconfigurations", "ignored", NAMESPACE)["status"]["state"] == "Pending"
    assert get(op, "serverbootconfigurations", "ours", NAMESPACE)["status"]["state"] == "Ready"


def test_the_probe_registers_the_machine_once_its_discovery_boot_is_ready(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    server = discovery(op, sbc_ready=False)
    passes(op)
    assert get(op, "serverbootconfigurations", server["metadata"]["name"], NAMESPACE)["status"]["state"] == "Ready"
    (payload,) = op.registry.posts()
    system = op.machines.get().system("rack-bmc")
    assert payload["systemUUID"] == system["systemUUID"] == server["spec"]["systemUUID"]
    assert [(nic["name"], nic["macAddress"]) for nic in payload["data"]["networkInterfaces"]] == [
        ("eno1", "02:00:00:00:01:01"), ("eno2", "02:00:00:00:01:02")]
    stamp = datetime.datetime.strptime(payload["data"]["timestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    assert abs((datetime.datetime.now(datetime.timezone.utc) - stamp).total_seconds()) < 60
    (post,) = [call for call in op.registry.calls if call[0] == "POST"]
    assert post[1] == REGISTRY + "/register"
    assert ("GET", "%s/systems/%s" % (REGISTRY, system["systemUUID"]), None) in op.registry.calls
    assert any("registered" in line for line in op.logs)


def test_the_probe_reports_again_only_while_the_registry_has_no_entry(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    discovery(op)
    passes(op, 5)
    assert len(op.registry.posts()) == 1
    assert len([call for call in op.registry.calls if call[0] == "GET"]) == 5
    assert op.next_due <= 2.0  # the agent looks again while the Server is in Discovery
    op.registry.systems.clear()  # metal-operator took the report (it deletes it after the discovery)
    passes(op, 1)
    assert len(op.registry.posts()) == 2


def test_no_probe_for_a_server_without_probe(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch, {"servers_without_probe": ["rack-bmc-system-0"]})
    discovery(op)
    passes(op)
    assert op.registry.calls == []


def test_no_probe_for_a_boot_configuration_that_is_not_the_discovery_one(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "rack-bmc")
    add_sbc(op, "rack-bmc-system-0", "Ready", internal=False)  # a ServerClaim's boot, not metal-operator's
    add_server(op, "rack-bmc-system-0")
    passes(op)
    assert op.registry.calls == []


def test_no_probe_while_the_discovery_boot_is_not_ready(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "rack-bmc")
    add_sbc(op, "rack-bmc-system-0", status_manager="a-test-playing-boot-operator")
    add_server(op, "rack-bmc-system-0")
    passes(op)
    assert op.registry.calls == []


def test_no_probe_for_a_server_of_another_machine(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    discovery(op, system_uuid=str(uuid.uuid4()))
    passes(op)
    assert op.registry.calls == []


def test_no_probe_for_a_bmc_no_lab_machine_answers_for(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    add_bmc(op, "elsewhere", ip="192.0.2.1", port=443)
    add_sbc(op, "s", "Ready")
    add_server(op, "s", bmc="elsewhere")
    add_bmc(op, "wrong-port", port=8443)  # the machine's address, another port
    add_sbc(op, "t", "Ready")
    add_server(op, "t", bmc="wrong-port")
    passes(op)
    assert op.registry.calls == []


def test_no_probe_while_the_machine_is_off_or_not_in_discovery(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch)
    server = discovery(op, power="Off")
    passes(op)
    assert op.registry.calls == []
    server = op.kube.patch(boot.object_path(GV, "servers", server), server, {"status": {"state": "Available"}})
    server = op.kube.patch(boot.object_path(GV, "servers", server), server, {"status": {"powerState": "On"}})
    passes(op)
    assert op.registry.calls == []
    op.kube.patch(boot.object_path(GV, "servers", server), server, {"status": {"state": "Discovery"}})
    passes(op)
    assert len(op.registry.posts()) == 1


def test_the_probe_reports_the_discovery_delay_after_the_power_on(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch, {"delays": {"discovery": 30}})
    discovery(op)
    passes(op)
    assert op.registry.calls == []
    assert 0 < op.next_due <= 30


def test_an_unreachable_or_refusing_registry_is_tried_again_soon(tmp_path, monkeypatch):
    op = operator(tmp_path, monkeypatch, registry=FakeRegistry(error=requests.ConnectionError("refused")))
    discovery(op)
    passes(op)
    assert op.next_due <= 1.0 and any("registry unreachable" in line for line in op.logs)
    op = operator(tmp_path, monkeypatch, registry=FakeRegistry(post_status=500))
    discovery(op)
    passes(op, 2)
    assert len(op.registry.posts()) == 2  # the report was not taken: posted again
    assert op.next_due <= 1.0 and any("registry answered 500: registry says no" in line for line in op.logs)


def test_probe_report_is_the_registration_payload_of_the_machine():
    system = settings.Machines(MACHINES).system("rack-bmc")
    now = datetime.datetime(2026, 12, 5, 1, 2, 3, tzinfo=datetime.timezone.utc)
    assert boot.probe_report(system, now) == {"systemUUID": system["systemUUID"], "data": {
        "timestamp": "2026-12-05T01:02:03Z",
        "systemInfo": {"systemInformation": {"manufacturer": "Lab Systems", "productName": "LS-1000",
                                             "serialNumber": system["serialNumber"], "uuid": system["systemUUID"],
                                             "skuNumber": "LS-1000-2S"},
                       "biosInformation": {"version": "1.9.2"}},
        "networkInterfaces": [
            {"name": "eno1", "ipAddresses": ["10.0.0.5"], "macAddress": "02:00:00:00:01:01", "carrierStatus": "up"},
            {"name": "eno2", "ipAddresses": [], "macAddress": "02:00:00:00:01:02", "carrierStatus": "up"}]}}
    default = settings.Machines(MACHINES).system("other-bmc")
    (nic,) = boot.probe_report(default)["data"]["networkInterfaces"]
    assert (nic["name"], nic["macAddress"]) == ("eth0", default["networkInterfaces"][0]["macAddress"])
