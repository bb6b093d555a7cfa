"""The lab's operators and stand-ins and the Gardener front, against the real API servers.

The real metal-operator with the lab's Redfish BMCs and the boot-operator and probe stand-in on
`baremetal`, gardenlet stand-in and the adminkubeconfig front on `garden`: everything this module
creates is named standin-test-<token>... (the Shoot played by a lab cluster of the same name lives in
this module's own Project namespace; its BMCs reach the test machines of lab/machines.yaml) and removed
at the end. Short delays and the injected failures come from the lab's standins.yaml, which the module
writes and restores.
"""

import base64
import datetime
import json
import socket
import ssl
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID

from conftest import REPO, kubectl, run_playbook, standins_restored, task_results
from regionlab import config, metal, processes, standins
from regionlab.standins import settings

# The collection imports itself by its collection path: the checkout's symlink under .cache.
COLLECTIONS = str(REPO / ".cache" / "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)
# pylint: disable=wrong-import-position
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import gardener, ironcore  # noqa: E402

pytestmark = [pytest.mark.lab_only, pytest.mark.standins]  # conftest.LAB_ONLY, conftest.STANDINS_MARK

TOKEN = uuid.uuid4().hex[:5]
PREFIX = "standin-test-%s" % TOKEN
METAL = "/apis/metal.ironcore.dev/v1alpha1"
CORE = "/apis/core.gardener.cloud/v1beta1"
DELAYS = {"discovery": 0.2, "shoot_step": 0.15, "care": 1.0}
PERIODIC_EVERY = 2.0  # reconcile_every of the periodically reconciled Shoot
# The rack's spare machine: its BMC object is named after it; it takes only the rack's credentials.
RACK_BMC = "lab-bmc-spare"
MACHINES = settings.Machines(yaml.safe_load(config.MACHINES.read_text()))
# The test machines each test BMC reaches (lab/machines.yaml).
MACHINE_OF = {"bmc": "lab-bmc-test-1", "nosecret": "lab-bmc-test-2", "err": "lab-bmc-test-3", "maint": "lab-bmc-test-4",
              "rack": RACK_BMC}
FAIL = "infrastructure quota of the lab exceeded"
UNSCHEDULABLE = "none out of the 0 seeds has the matching provider for region lab"
PROJECT = PREFIX
NAMESPACE = "garden-%s" % PREFIX
CONFIRM = {"metadata": {"annotations": {"confirmation.gardener.cloud/deletion": "true"}}}
MERGE = "application/merge-patch+json"


GARDEN, BAREMETAL, PLAYER = config.cluster("garden"), config.cluster("baremetal"), config.cluster("hv-pool-a")


class Api:
    """Admin requests to one cluster, straight to its API server or through another URL (the front)."""

    def __init__(self, target, base=None, cert_of=None):
        self.base = base or target.server
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.verify = str(target.pki / "ca.crt")
        pki_dir = (cert_of or target).pki
        self.session.cert = (str(pki_dir / "admin.crt"), str(pki_dir / "admin.key"))

    def call(self, method, url, body=None, content_type="application/json", headers=None):
        data = json.dumps(body) if body is not None else None
        resp = self.session.request(method, self.base + url, data=data, timeout=20,
                                    headers=dict(headers or {}, **{"Content-Type": content_type}))
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, resp.text

    def get(self, url):
        code, body = self.call("GET", url)
        return body if code == 200 else None

    def ok(self, method, url, body=None, content_type="application/json"):
        code, out = self.call(method, url, body, content_type)
        assert code < 300, "%s %s: %s %s" % (method, url, code, out)
        return out


def wait_for(check, what, timeout=20.0, until=None):
    """check() until it is truthy; with until, fetch with check() until until(object) holds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if (until(last) if until else last):
            return last
        time.sleep(0.05)
    raise AssertionError("timed out after %ss waiting for %s (last: %r)" % (timeout, what, last))


class Recorder:
    """Watches a resource and keeps, per object name, the distinct values of a status summary.

    `seen[name]` lists the values in order, `when[(name, value)]` when each was first seen
    (time.monotonic()). Short watches in a loop, so stop() needs no cross-thread close.
    """

    def __init__(self, api, url, summary):
        self.seen, self.when = {}, {}
        self.api, self.url, self.summary = api, url, summary
        self.stopped = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stopped:
            try:
                with self.api.session.get(self.api.base + self.url, stream=True, timeout=(5, 10),
                                          params={"watch": "1", "timeoutSeconds": "3"}) as resp:
                    for line in resp.iter_lines(chunk_size=None):
                        obj = json.loads(line)["object"]
                        name, value = obj["metadata"]["name"], self.summary(obj)
                        values = self.seen.setdefault(name, [])
                        if not values or values[-1] != value:
                            values.append(value)
                            self.when.setdefault((name, value), time.monotonic())
            except (requests.RequestException, ValueError, KeyError):
                time.sleep(0.2)

    def stop(self):
        self.stopped = True


def status(obj):
    return (obj or {}).get("status") or {}


def condition(obj, ctype):
    return next((c for c in status(obj).get("conditions") or [] if c["type"] == ctype), None)


# ---------------------------------------------------------------------------
# Everything is created up front so the flows run side by side.

def bmc(name, secret, machine, labels=None):
    """A BMC object reaching one of the lab's machines (its Redfish mock)."""
    ip, port = MACHINES.address(machine)
    return {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "BMC",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": {"access": {"ip": ip, "macAddress": "aa:bb:cc:00:10:01"},
                     "bmcSecretRef": {"name": secret}, "protocol": {"name": "Redfish", "port": port, "scheme": "http"}}}


def rack_login():
    """The rack's BMC login (what the lab's Redfish BMCs accept)."""
    username, password = MACHINES.login()
    return {"username": username, "password": password}


def bmc_secret(name, **data):
    return {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "BMCSecret", "metadata": {"name": name},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def shoot(name, labels=None, workers=True):
    spec = {"cloudProfile": {"kind": "CloudProfile", "name": "ironcore"}, "region": "lab",
            "provider": {"type": "ironcore-metal"}, "purpose": "evaluation"}
    if workers:
        spec["credentialsBindingName"] = "lab"
        spec["networking"] = {"type": "calico"}
        spec["provider"]["workers"] = [{"name": "pool", "machine": {"type": "bm"}, "minimum": 1, "maximum": 1}]
    return {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels or {}}, "spec": spec}


@pytest.fixture(scope="module")
def env(lab):
    with standins_restored():
        names = {
            "bmc": PREFIX + "-bmc-a", "secret": PREFIX + "-secret-a", "nosecret": PREFIX + "-bmc-nosecret",
            "late_secret": PREFIX + "-secret-late", "err": PREFIX + "-bmc-err", "err_secret": PREFIX + "-secret-err",
            "create": PREFIX + "-create", "fail": PREFIX + "-fail", "nocluster": PREFIX + "-nocluster",
            "delete": PREFIX + "-delete", "named": "st-pool-b", "rack_secret": PREFIX + "-secret-rack",
            "unsched": PREFIX + "-unsched", "maint": PREFIX + "-bmc-maint",
        }
        names["maint_server"] = names["maint"] + "-system-0"
        names["server"] = names["bmc"] + "-system-0"
        names["err_server"] = names["err"] + "-system-0"
        config.STANDINS.write_text(yaml.safe_dump({
            "delays": DELAYS, "servers_without_probe": [names["err_server"]],
            "shoots": {names["fail"]: {"fail": FAIL}, names["unsched"]: {"unschedulable": UNSCHEDULABLE}}}))
        metal, garden = Api(BAREMETAL), Api(GARDEN)
        front = Api(GARDEN, standins.front_url())

        def server_summary(obj):
            return status(obj).get("state"), status(obj).get("powerState")

        def shoot_summary(obj):
            last = status(obj).get("lastOperation") or {}
            return last.get("type"), last.get("state"), last.get("progress")

        def care_summary(obj):
            last = status(obj).get("lastOperation") or {}
            return (last.get("type"), last.get("state"),
                    tuple((c["type"], c["status"], c.get("reason")) for c in status(obj).get("conditions") or []),
                    tuple((c["type"], c["status"], c.get("reason")) for c in status(obj).get("constraints") or []))

        recorders = {"servers": Recorder(metal, METAL + "/servers", server_summary),
                     "shoots": Recorder(garden, CORE + "/namespaces/%s/shoots" % NAMESPACE, shoot_summary),
                     "care": Recorder(garden, CORE + "/namespaces/%s/shoots" % NAMESPACE, care_summary)}
        time.sleep(0.3)  # the watches are open
        created = {}
        metal.ok("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": PREFIX}})
        metal.ok("POST", METAL + "/bmcsecrets", bmc_secret(names["secret"], **rack_login()))
        metal.ok("POST", METAL + "/bmcsecrets", bmc_secret(names["err_secret"], **rack_login()))
        metal.ok("POST", METAL + "/bmcs", bmc(names["bmc"], names["secret"], MACHINE_OF["bmc"], {"standin-test/rack": "r1"}))
        metal.ok("POST", METAL + "/bmcs", bmc(names["nosecret"], names["late_secret"], MACHINE_OF["nosecret"]))
        metal.ok("POST", METAL + "/bmcs", bmc(names["err"], names["err_secret"], MACHINE_OF["err"]))
        metal.ok("POST", METAL + "/bmcs", bmc(names["maint"], names["secret"], MACHINE_OF["maint"]))
        metal.ok("POST", METAL + "/bmcsecrets", bmc_secret(names["rack_secret"], username="lab-bmc-admin",
                                                           password="not-the-rack-password"))
        metal.ok("POST", METAL + "/bmcs", bmc(RACK_BMC, names["rack_secret"], MACHINE_OF["rack"]))
        garden.ok("POST", CORE + "/projects", {"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                                               "metadata": {"name": PROJECT}, "spec": {"namespace": NAMESPACE}})
        wait_for(lambda: status(garden.get(CORE + "/projects/" + PROJECT)).get("phase") == "Ready"
                 and garden.get("/api/v1/namespaces/" + NAMESPACE), "Project %s Ready" % PROJECT)
        for key, body in (("create", shoot(names["create"], {"c5c3.io/cluster": PLAYER.name})),
                          ("fail", shoot(names["fail"], {"c5c3.io/cluster": PLAYER.name})),
                          ("nocluster", shoot(names["nocluster"])),
                          ("delete", shoot(names["delete"], {"c5c3.io/cluster": "st-pool-a"})),
                          ("named", shoot(names["named"], workers=False)),
                          ("unsched", shoot(names["unsched"]))):
            garden.ok("POST", CORE + "/namespaces/%s/shoots" % NAMESPACE, body)
            created[key] = time.monotonic()
        yield {"names": names, "metal": metal, "garden": garden, "front": front, "created": created,
               "recorders": recorders}
        for rec in recorders.values():
            rec.stop()
        # Shoots first (confirmed), then the Project; claims, BMCs (their Servers follow) and secrets.
        for code_body in [garden.call("GET", CORE + "/namespaces/%s/shoots" % NAMESPACE)]:
            for item in (code_body[1] or {}).get("items", []):
                url = CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, item["metadata"]["name"])
                garden.call("PATCH", url, CONFIRM, MERGE)
                garden.call("DELETE", url)
        for item in (metal.get(METAL + "/namespaces/%s/serverclaims" % PREFIX) or {}).get("items", []):
            metal.call("DELETE", METAL + "/namespaces/%s/serverclaims/%s" % (PREFIX, item["metadata"]["name"]))
        wait_for(lambda: not (garden.get(CORE + "/namespaces/%s/shoots" % NAMESPACE) or {}).get("items")
                 and not (metal.get(METAL + "/namespaces/%s/serverclaims" % PREFIX) or {}).get("items"),
                 "test Shoots and ServerClaims gone")
        garden.call("PATCH", CORE + "/projects/" + PROJECT, CONFIRM, MERGE)
        garden.call("DELETE", CORE + "/projects/" + PROJECT)
        for item in (metal.get(METAL + "/namespaces/%s/servermaintenances" % PREFIX) or {}).get("items", []):
            metal.call("DELETE", METAL + "/namespaces/%s/servermaintenances/%s" % (PREFIX, item["metadata"]["name"]))
        for key in ("bmc", "nosecret", "err", "maint"):
            metal.call("DELETE", METAL + "/bmcs/" + names[key])
        metal.call("DELETE", METAL + "/bmcs/" + RACK_BMC)
        for key in ("secret", "late_secret", "err_secret", "rack_secret"):
            metal.call("DELETE", METAL + "/bmcsecrets/" + names[key])
        metal.call("DELETE", "/api/v1/namespaces/" + PREFIX)
        wait_for(lambda: not [s for s in (metal.get(METAL + "/servers") or {}).get("items", [])
                              if s["metadata"]["name"].startswith((PREFIX, RACK_BMC))], "test Servers gone", 60)
        wait_for(lambda: garden.get(CORE + "/projects/" + PROJECT) is None, "test Project gone")


def server(env, key="server"):
    return env["metal"].get(METAL + "/servers/" + env["names"][key])


def shoot_obj(env, key):
    return env["garden"].get(CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, env["names"][key]))


def settled(obj):
    """A Shoot whose last operation succeeded for its generation and whose conditions are all True."""
    st = status(obj)
    last = st.get("lastOperation") or {}
    return (obj and last.get("state") == "Succeeded" and st.get("observedGeneration") == obj["metadata"]["generation"]
            and st.get("conditions") and all(c["status"] == "True" for c in st["conditions"])) and obj


# ---------------------------------------------------------------------------
# The processes and what `regionlab up` seeded

def test_standins_run_as_lab_processes(env):
    info = standins.status(config.clusters())
    assert all(s["ready"] for s in info.values()), info
    assert set(standins.PROCESSES) <= set(processes.running())
    for name, arg in standins.PROCESSES.items():
        assert (processes.LOGS / ("%s.log" % name)).exists()
        assert (processes.RUN / ("%s.pid" % name)).read_text().split("\n")[2] == arg


def test_project_cobaltcore_and_its_namespace(env):
    garden = env["garden"]
    project = garden.get(CORE + "/projects/cobaltcore")
    assert project["spec"]["namespace"] == "garden-cobaltcore"
    assert status(project)["phase"] == "Ready" and "gardener" in project["metadata"]["finalizers"]
    namespace = garden.get("/api/v1/namespaces/garden-cobaltcore")["metadata"]
    assert namespace["labels"]["gardener.cloud/role"] == "project"
    assert namespace["labels"]["project.gardener.cloud/name"] == "cobaltcore"
    assert namespace["annotations"]["namespace.gardener.cloud/project"] == project["metadata"]["uid"]
    assert namespace["ownerReferences"][0]["uid"] == project["metadata"]["uid"]


def test_garden_kubeconfig_goes_through_the_front(env, kubeconfigs):
    doc = yaml.safe_load(Path(kubeconfigs["garden"]).read_text())
    assert doc["clusters"][0]["cluster"]["server"] == standins.front_url()
    out = json.loads(kubectl(kubeconfigs["garden"], "version", "-o", "json").stdout)
    assert out["serverVersion"]["gitVersion"] == config.KUBERNETES_VERSION


# ---------------------------------------------------------------------------
# metal-operator (real, v0.7.0) with the lab's Redfish BMCs, boot-operator and probe stand-in

def test_metal_operator_and_the_bmcs_run_as_lab_processes(env):
    assert processes.pid_of(metal.OPERATOR) and processes.pid_of(metal.REDFISH)
    info = metal.status()
    assert info["operator"] and info["bmcs"], info
    # Each machine answers on its own address, and only to the rack's login.
    for machine in (MACHINE_OF["bmc"], RACK_BMC):
        ip, port = MACHINES.address(machine)
        url = "http://%s:%d/redfish/v1/Systems" % (ip, port)
        assert requests.get(url, auth=tuple(rack_login().values()), timeout=5).status_code == 200
        assert requests.get(url, auth=("lab-bmc-admin", "wrong"), timeout=5).status_code == 401
        assert requests.get(url, auth=("admin", "adminpass"), timeout=5).status_code == 401  # the mock's own


def test_bmc_enabled_with_manager_facts(env):
    name = env["names"]["bmc"]
    obj = wait_for(lambda: env["metal"].get(METAL + "/bmcs/" + name), "BMC Enabled",
                   until=lambda o: status(o).get("state") == "Enabled")
    st = status(obj)
    facts = MACHINES.manager(MACHINE_OF["bmc"])
    assert st["powerState"] == "On"
    assert (st["ip"], st["macAddress"]) == (MACHINES.address(MACHINE_OF["bmc"])[0], "aa:bb:cc:00:10:01")
    assert (st["manufacturer"], st["model"], st["sku"], st["serialNumber"], st["firmwareVersion"]) == (
        facts["manufacturer"], facts["model"], facts["sku"], facts["serialNumber"], facts["firmwareVersion"])
    ready = condition(obj, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == ("True", "Connected", "BMC is connected")


def test_bmc_secret_missing_then_incomplete_then_complete(env):
    metal_api, names = env["metal"], env["names"]
    url = METAL + "/bmcs/" + names["nosecret"]
    wait_for(lambda: condition(metal_api.get(url), "Ready"), "Ready condition of a BMC without secret")
    obj = metal_api.get(url)
    ready = condition(obj, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "UnknownError")
    assert ready["message"] == ('BMC connection error: failed to get BMC secret: BMCSecret.metal.ironcore.dev "%s" '
                                "not found" % names["late_secret"])
    assert status(obj).get("state") != "Enabled"
    metal_api.ok("POST", METAL + "/bmcsecrets", bmc_secret(names["late_secret"], username=rack_login()["username"]))
    wait_for(lambda: "for key 'password'" in (condition(metal_api.get(url), "Ready") or {}).get("message", ""),
             "missing password reported")
    assert condition(metal_api.get(url), "Ready")["message"] == (
        "BMC connection error: failed to get credentials from BMC secret: cannot find value in BMCSecret '%s' for "
        "key 'password' in data nor in stringData" % names["late_secret"])
    metal_api.ok("PATCH", METAL + "/bmcsecrets/" + names["late_secret"],
                 {"data": {"password": base64.b64encode(rack_login()["password"].encode()).decode()}}, MERGE)
    # The BMC's failed reconciles back off (controller-runtime's rate limiter); the secret's change requeues it.
    wait_for(lambda: status(metal_api.get(url)).get("state") == "Enabled", "BMC Enabled once its secret is complete",
             timeout=60)
    assert condition(metal_api.get(url), "Ready")["status"] == "True"


def available(obj):
    """Discovered and cleaned up: Available, powered off, discovery boot configuration gone."""
    return (status(obj).get("state") == "Available" and status(obj).get("powerState") == "Off"
            and "bootConfigurationRef" not in obj["spec"] and obj)


def test_server_discovered_to_available(env):
    names = env["names"]
    obj = wait_for(lambda: available(server(env)), "Server Available", 60)
    bmc_obj = env["metal"].get(METAL + "/bmcs/" + names["bmc"])
    system = MACHINES.system(MACHINE_OF["bmc"])
    assert obj["spec"]["systemUUID"] == system["systemUUID"] == str(
        uuid.uuid5(settings.LAB_NAMESPACE, MACHINE_OF["bmc"] + "/0"))
    assert obj["spec"]["bmcRef"] == {"name": names["bmc"]}
    assert obj["spec"]["systemURI"] == metal.SYSTEM
    assert obj["spec"]["power"] == "Off" and "bootConfigurationRef" not in obj["spec"]
    (owner,) = obj["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("BMC", bmc_obj["metadata"]["uid"], True)
    assert obj["metadata"]["labels"]["standin-test/rack"] == "r1"  # copied from the BMC
    assert "metal.ironcore.dev/server" in obj["metadata"]["finalizers"]
    st = status(obj)
    assert (st["manufacturer"], st["model"], st["sku"], st["serialNumber"]) == (
        system["manufacturer"], system["model"], system["sku"], system["serialNumber"])
    assert st["totalSystemMemory"] == "%dGi" % system["totalSystemMemoryGiB"]
    # What the probe reported to the registry.
    nic, reported = system["networkInterfaces"][0], st["networkInterfaces"][0]
    assert (reported["name"], reported["macAddress"]) == (nic["name"], nic["macAddress"])
    states = [s for s, unused in env["recorders"]["servers"].seen[names["server"]]]
    order = [s for i, s in enumerate(states) if s and (i == 0 or states[i - 1] != s)]
    assert order[:3] == ["Initial", "Discovery", "Available"], states
    powers = [p for unused, p in env["recorders"]["servers"].seen[names["server"]]]
    assert "On" in powers, powers  # discovery boots the machine


def test_server_without_probe_starts_discovery_over_and_the_collection_sees_it(env):
    """metal-operator never writes Error: a probe that never reports sends the Server back to Initial
    after the discovery timeout, endlessly, and the collection notices the restart by name; or, as upstream's
    timeout check reads only the last managedFields entry, the Server stays in Discovery and the collection
    reports it stuck."""
    name = env["names"]["err_server"]
    seen, restarted = {}, []

    def look():
        servers = [s for s in (env["metal"].get(METAL + "/servers") or {}).get("items", [])
                   if s["metadata"]["name"] == name]
        restarted.extend(ironcore.discovery_restarts(seen, servers))
        return restarted
    timeout = int(metal.DISCOVERY_TIMEOUT.rstrip("s"))
    try:
        wait_for(look, "the discovery of %s to start over" % name, timeout=timeout * 3 + 20)
    except AssertionError:
        # metal-operator v0.7.0 times a discovery out only while the last managedFields entry is a status Update
        # (checkLastStatusUpdateAfter); when its own spec write was recorded last, the Server stays in Discovery
        # for good. The collection must then report it as stuck.
        found = server(env, "err_server")
        assert found["status"]["state"] == "Discovery", found["status"]
        assert found["metadata"]["managedFields"][-1].get("subresource") != "status", found["metadata"]
        problems = ironcore.discovery_problems([env["names"]["err"]], [found], time.time())
        assert problems and problems[0].startswith("BMC %s: %s " % (env["names"]["err"], name)), problems
        return

    def order():
        states = [s for s, unused in env["recorders"]["servers"].seen[name]]
        changes = [s for i, s in enumerate(states) if s and (i == 0 or states[i - 1] != s)]
        return changes if len(changes) >= 4 else None
    # The restart is noticed at Initial already; the watch may not have the next Discovery yet.
    assert wait_for(order, "the second Discovery", 30)[:4] == ["Initial", "Discovery", "Initial", "Discovery"]
    states = [s for s, unused in env["recorders"]["servers"].seen[name]]
    assert "Error" not in states and "Available" not in states, states
    problems = ironcore.discovery_problems([env["names"]["err"]], [server(env, "err_server")], time.time())
    assert problems and problems[0].startswith("BMC %s: %s " % (env["names"]["err"], name)), problems


def test_a_wrong_password_leaves_the_bmc_connected_but_never_enabled_as_upstream(env):
    """metal-operator v0.7.0's connection check reads only the Redfish service root, which needs no login:
    the BMC is Ready (Connected) with a refused password, and its state never comes (the manager read gets
    401), so it is never Enabled. The right password then enables it; a wrong one later leaves it Enabled and Ready. So the
    collection logs in itself (ironcore_bmc check_credentials)."""
    metal_api, names = env["metal"], env["names"]
    url = METAL + "/bmcs/" + RACK_BMC
    obj = wait_for(lambda: metal_api.get(url), "BMC %s connected" % RACK_BMC,
                   until=lambda o: (condition(o, "Ready") or {}).get("reason") == "Connected")
    time.sleep(3)  # its reconciles keep failing at the manager read
    obj = metal_api.get(url)
    assert status(obj).get("state") != "Enabled", status(obj)
    assert not evaluate(obj).ready and not evaluate(obj).terminal
    assert not (metal_api.get(METAL + "/servers/%s-system-0" % RACK_BMC))  # GetSystems refused too
    secret_url = METAL + "/bmcsecrets/" + names["rack_secret"]
    password = rack_login()["password"]
    metal_api.ok("PATCH", secret_url, {"data": {"password": base64.b64encode(password.encode()).decode()}}, MERGE)
    wait_for(lambda: evaluate(metal_api.get(url)).ready, "BMC %s Enabled and Ready" % RACK_BMC, timeout=60)
    metal_api.ok("PATCH", secret_url, {"data": {"password": base64.b64encode(b"rotated-elsewhere").decode()}}, MERGE)
    time.sleep(3)
    obj = metal_api.get(url)
    assert status(obj)["state"] == "Enabled" and evaluate(obj).ready  # nothing tells of the refusal


def test_claim_binds_releases_and_rebinds_keeping_labels(env):
    metal_api, names = env["metal"], env["names"]
    wait_for(lambda: available(server(env)), "Server Available", 60)
    url = METAL + "/servers/" + names["server"]
    # The collection labels Servers by server-side apply; nothing of it may be lost.
    apply = {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "Server", "metadata": {
        "name": names["server"], "labels": {"standin-test/pool": "p1"}, "annotations": {"standin-test/note": "kept"}}}
    code, out = metal_api.call("PATCH", url + "?fieldManager=c5c3.cobaltcore&force=true", apply,
                               "application/apply-patch+yaml")
    assert code == 200, out
    claims = METAL + "/namespaces/%s/serverclaims" % PREFIX

    def claim(name):
        return {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "ServerClaim",
                "metadata": {"name": name, "namespace": PREFIX},
                "spec": {"power": "On", "image": "ghcr.io/gardenlinux/gardenlinux:1592",
                         "ignitionSecretRef": {"name": "ignition"},
                         "serverSelector": {"matchLabels": {"standin-test/pool": "p1"}}}}

    metal_api.ok("POST", claims, claim("first"))
    bound = wait_for(lambda: metal_api.get(claims + "/first"), "first claim Bound", 30,
                     until=lambda o: status(o).get("phase") == "Bound")
    assert bound["spec"]["serverRef"] == {"name": names["server"]}
    assert "metal.ironcore.dev/serverclaim" in bound["metadata"]["finalizers"]
    obj = wait_for(lambda: server(env), "claimed Server On", 30, until=lambda o: status(o).get("powerState") == "On")
    assert status(obj)["state"] == "Reserved"
    assert obj["spec"]["serverClaimRef"]["name"] == "first" and obj["spec"]["serverClaimRef"]["namespace"] == PREFIX
    assert obj["spec"]["power"] == "On"
    assert obj["spec"]["bootConfigurationRef"]["name"] == "first"
    sbc = metal_api.get(METAL + "/namespaces/%s/serverbootconfigurations/first" % PREFIX)
    assert status(sbc)["state"] == "Ready" and sbc["spec"]["image"] == "ghcr.io/gardenlinux/gardenlinux:1592"
    # A second claim finds no free server ...
    metal_api.ok("POST", claims, claim("second"))
    time.sleep(2)
    assert status(metal_api.get(claims + "/second")).get("phase") in (None, "", "Unbound")
    # ... until the first one is deleted and the server is cleaned up: Available, then claimed again.
    metal_api.ok("DELETE", claims + "/first")
    wait_for(lambda: metal_api.get(claims + "/first") is None, "first claim gone", 30)
    wait_for(lambda: status(metal_api.get(claims + "/second")).get("phase") == "Bound", "second claim Bound", 60)
    states = [s for s, unused in env["recorders"]["servers"].seen[names["server"]]]
    assert states[-1] == "Reserved" and "Available" in states[states.index("Reserved"):], states
    obj = server(env)
    assert obj["spec"]["serverClaimRef"]["name"] == "second"
    assert obj["metadata"]["labels"]["standin-test/pool"] == "p1"
    assert obj["metadata"]["annotations"]["standin-test/note"] == "kept"
    owners = [m for m in obj["metadata"]["managedFields"] if m["manager"] == "c5c3.cobaltcore"]
    assert owners and "f:standin-test/pool" in json.dumps(owners[0]["fieldsV1"])
    metal_api.ok("DELETE", claims + "/second")
    wait_for(lambda: status(server(env)).get("state") == "Available" and status(server(env)).get("powerState") == "Off"
             and "serverClaimRef" not in server(env)["spec"], "server released", 60)


# ---------------------------------------------------------------------------
# gardenlet

def test_shoot_create_succeeds(env):
    obj = wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)
    st = status(obj)
    assert st["lastOperation"]["type"] == "Create" and st["lastOperation"]["progress"] == 100
    assert st["lastOperation"]["description"] == "Shoot cluster has been successfully reconciled."
    assert st["observedGeneration"] == obj["metadata"]["generation"]
    assert st["technicalID"] == "shoot--%s--%s" % (PROJECT, env["names"]["create"])
    assert st["uid"] == obj["metadata"]["uid"]
    assert st["gardener"]["version"] == "v1.146.3"
    assert st["advertisedAddresses"] == [{"name": "unmanaged", "url": PLAYER.server}]
    assert obj["metadata"]["finalizers"] == ["gardener"]
    assert [c["type"] for c in st["conditions"]] == [
        "APIServerAvailable", "ControlPlaneHealthy", "ObservabilityComponentsHealthy", "EveryNodeReady",
        "SystemComponentsHealthy"]
    assert condition(obj, "APIServerAvailable")["reason"] == "HealthzRequestSucceeded"
    ops = env["recorders"]["shoots"].seen[env["names"]["create"]]
    progress = [p for t, s, p in ops if t == "Create" and s == "Processing"]
    assert progress == sorted(progress) and len(progress) >= 4, ops


def test_shoot_named_like_a_lab_cluster_without_workers(env):
    obj = wait_for(lambda: settled(shoot_obj(env, "named")), "workerless Shoot reconciled", 30)
    assert status(obj)["advertisedAddresses"] == [{"name": "unmanaged", "url": config.cluster("st-pool-b").server}]
    assert condition(obj, "EveryNodeReady") is None


def test_shoot_spec_change_reconciles(env):
    garden = env["garden"]
    before = wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)
    url = CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, env["names"]["create"])
    changed = garden.ok("PATCH", url, {"spec": {"purpose": "testing"}}, MERGE)
    assert changed["metadata"]["generation"] == before["metadata"]["generation"] + 1
    after = wait_for(lambda: shoot_obj(env, "create"), "Reconcile Succeeded", 30,
                     until=lambda o: settled(o) and status(o)["lastOperation"]["type"] == "Reconcile")
    assert status(after)["observedGeneration"] == changed["metadata"]["generation"]
    ops = env["recorders"]["shoots"].seen[env["names"]["create"]]
    assert ("Reconcile", "Processing", 0) in ops, ops


def test_shoot_failure_injection(env):
    obj = wait_for(lambda: shoot_obj(env, "fail"), "Shoot Failed", 15,
                   until=lambda o: (status(o).get("lastOperation") or {}).get("state") == "Failed")
    failed = [t for (name, (unused, state, unused_too)), t in env["recorders"]["shoots"].when.items()
              if name == env["names"]["fail"] and state == "Failed"]
    took = min(failed) - env["created"]["fail"]
    # A configuration problem fails the first attempt: no retry (state Error) before Failed. The time only bounds
    # the stand-in's own pace (a few shoot_steps, beside the module's other Shoots, on a loaded machine: CI saw
    # 6.4 s with molecule's converge beside it); a retry would show as state Error.
    ops = env["recorders"]["shoots"].seen[env["names"]["fail"]]
    assert not [op for op in ops if op[1] == "Error"], ops
    assert took < 15, "Failed only %.1fs after creation" % took
    st = status(obj)
    task = "Waiting until shoot infrastructure has been reconciled"
    (error,) = st["lastErrors"]
    assert error["description"] == 'task "%s" failed: %s' % (task, FAIL)
    assert error["taskID"] == task and error["codes"] == ["ERR_CONFIGURATION_PROBLEM"] and error["lastUpdateTime"]
    assert st["lastOperation"]["type"] == "Create"
    assert st["lastOperation"]["description"] == (
        'Flow "Shoot cluster reconciliation" encountered task errors: [task "%s" failed: %s]' % (task, FAIL))
    # A Create that failed is pardoned by the care controller: nothing True, nothing False.
    assert {c["status"] for c in st["conditions"]} <= {"Progressing", "Unknown"}
    assert not st.get("advertisedAddresses")


def test_shoot_that_no_lab_cluster_plays_fails(env):
    obj = wait_for(lambda: shoot_obj(env, "nocluster"), "Shoot Failed", 10,
                   until=lambda o: (status(o).get("lastOperation") or {}).get("state") == "Failed")
    (error,) = status(obj)["lastErrors"]
    assert "no lab cluster plays Shoot %s/%s" % (NAMESPACE, env["names"]["nocluster"]) in error["description"]
    assert "c5c3.io/cluster" in error["description"]


def test_shoot_deletion_needs_confirmation(env):
    front = env["front"]  # clients delete through the front, as they do everything
    url = CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, env["names"]["delete"])
    wait_for(lambda: settled(shoot_obj(env, "delete")), "Shoot reconciled", 30)
    code, body = front.call("DELETE", url)
    assert code == 403 and body["reason"] == "Forbidden", body
    assert body["message"].startswith('shoots.core.gardener.cloud "%s" is forbidden: ' % env["names"]["delete"])
    assert body["message"].endswith('must have a "confirmation.gardener.cloud/deletion" annotation to delete')
    assert shoot_obj(env, "delete")["metadata"].get("deletionTimestamp") is None
    front.ok("PATCH", url, CONFIRM, MERGE)
    front.ok("DELETE", url)
    wait_for(lambda: shoot_obj(env, "delete") is None, "Shoot deleted", 20)
    ops = env["recorders"]["shoots"].seen[env["names"]["delete"]]
    deleting = [op for op in ops if op[0] == "Delete"]
    assert deleting[0] == ("Delete", "Processing", 0) and deleting[-1] == ("Delete", "Succeeded", 100), ops


# ---------------------------------------------------------------------------
# The Gardener front

def admin_kubeconfig(front, name, body):
    return front.call("POST", CORE + "/namespaces/%s/shoots/%s/adminkubeconfig" % (NAMESPACE, name), body)


def test_front_admin_kubeconfig_reaches_the_playing_cluster(env, tmp_path):
    front, name = env["front"], env["names"]["create"]
    wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)
    request = {"apiVersion": "authentication.gardener.cloud/v1alpha1", "kind": "AdminKubeconfigRequest",
               "spec": {"expirationSeconds": 600}}
    asked = datetime.datetime.now(datetime.timezone.utc)
    code, out = admin_kubeconfig(front, name, request)
    assert code == 201, out
    assert (out["kind"], out["apiVersion"]) == ("AdminKubeconfigRequest", "authentication.gardener.cloud/v1alpha1")
    assert out["spec"]["expirationSeconds"] == 600
    doc = yaml.safe_load(base64.b64decode(out["status"]["kubeconfig"]))
    context = "%s--%s-unmanaged" % (NAMESPACE, name)
    assert doc["current-context"] == context
    assert doc["clusters"][0]["cluster"]["server"] == PLAYER.server
    cert = x509.load_pem_x509_certificate(base64.b64decode(doc["users"][0]["user"]["client-certificate-data"]))
    expires = datetime.datetime.strptime(out["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    assert cert.not_valid_after_utc == expires
    assert abs((expires - asked).total_seconds() - 600) < 5
    ca = x509.load_pem_x509_certificate((PLAYER.pki / "ca.crt").read_bytes())
    assert cert.issuer == ca.subject
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "gardener.cloud:admin:lab-admin"
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    assert "gardener.cloud:system:admins" in orgs
    path = tmp_path / "shoot.yaml"
    path.write_text(yaml.safe_dump(doc))
    version = json.loads(kubectl(path, "version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"] == config.KUBERNETES_VERSION
    # kube-system's uid tells the clusters apart.
    uid = kubectl(path, "get", "namespace", "kube-system", "-o", "jsonpath={.metadata.uid}").stdout
    assert uid == kubectl(PLAYER.direct_kubeconfig, "get", "namespace", "kube-system",
                          "-o", "jsonpath={.metadata.uid}").stdout
    assert uid != kubectl(GARDEN.direct_kubeconfig, "get", "namespace", "kube-system",
                          "-o", "jsonpath={.metadata.uid}").stdout
    # Every request mints a new credential; the defaults and the cap are gardener-apiserver's.
    unused, again = admin_kubeconfig(front, name, request)
    other = yaml.safe_load(base64.b64decode(again["status"]["kubeconfig"]))
    assert other["users"][0]["user"]["client-certificate-data"] != doc["users"][0]["user"]["client-certificate-data"]
    assert admin_kubeconfig(front, name, {"spec": {}})[1]["spec"]["expirationSeconds"] == 3600
    assert admin_kubeconfig(front, name, {"spec": {"expirationSeconds": 10 ** 6}})[1]["spec"]["expirationSeconds"] \
        == 86400


def test_front_admin_kubeconfig_errors(env):
    front, names = env["front"], env["names"]
    code, body = admin_kubeconfig(front, names["create"], {"spec": {"expirationSeconds": 60}})
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"] == ('AdminKubeconfigRequest.authentication.gardener.cloud "" is invalid: '
                               'spec.expirationSeconds: Invalid value: 60: may not specify a duration less than '
                               '10 minutes')
    code, body = admin_kubeconfig(front, PREFIX + "-missing", {})
    assert (code, body["reason"], body["details"]["kind"]) == (404, "NotFound", "shoots")
    assert body["message"] == 'shoots.core.gardener.cloud "%s-missing" not found' % PREFIX
    wait_for(lambda: (status(shoot_obj(env, "fail")).get("lastOperation") or {}).get("state") == "Failed",
             "Shoot Failed", 10)
    code, body = admin_kubeconfig(front, names["fail"], {})
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"].endswith("no suitable advertised address for kube-apiserver found in "
                                    ".status.advertisedAddresses")
    code, body = front.call("GET", CORE + "/namespaces/%s/shoots/%s/adminkubeconfig" % (NAMESPACE, names["create"]))
    assert (code, body["reason"]) == (405, "MethodNotAllowed")


def test_front_passes_everything_else_through(env):
    front, garden = env["front"], env["garden"]
    assert front.get("/version") == garden.get("/version")
    missing = CORE + "/namespaces/%s/shoots/%s-missing" % (NAMESPACE, PREFIX)
    assert front.call("GET", missing) == garden.call("GET", missing)
    assert front.call("GET", missing)[0] == 404
    # A watch streams through: a ConfigMap created meanwhile arrives as an event.
    events = []
    resp = front.session.get(front.base + "/api/v1/namespaces/%s/configmaps" % NAMESPACE,
                             params={"watch": "1", "timeoutSeconds": "5"}, stream=True, timeout=10)

    def read():
        for line in resp.iter_lines(chunk_size=None):
            events.append(json.loads(line))
            if any(e["object"]["metadata"]["name"] == PREFIX + "-cm" for e in events):
                resp.close()
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.3)
    front.ok("POST", "/api/v1/namespaces/%s/configmaps" % NAMESPACE, {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": PREFIX + "-cm"}, "data": {"a": "b"}})
    reader.join(8)
    assert any(e["type"] == "ADDED" and e["object"]["metadata"]["name"] == PREFIX + "-cm" for e in events), events
    # The client's identity reaches the API server: impersonating a nobody is refused there.
    code, body = front.call("GET", "/api/v1/namespaces/%s/secrets" % NAMESPACE,
                            headers={"Impersonate-User": "system:serviceaccount:default:nobody"})
    assert code == 403 and 'User "system:serviceaccount:default:nobody" cannot list' in body["message"], body
    review = front.ok("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                      {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert review["status"]["userInfo"]["username"] == "lab-admin"
    assert "system:masters" in review["status"]["userInfo"]["groups"]


def test_front_requires_a_garden_client_certificate(env):
    host, port = "127.0.0.1", config.GARDEN_FRONT_PORT
    for cert_of in (None, PLAYER):
        context = ssl.create_default_context(cafile=str(GARDEN.pki / "ca.crt"))
        if cert_of is not None:  # a certificate of another cluster's CA
            context.load_cert_chain(str(cert_of.pki / "admin.crt"), str(cert_of.pki / "admin.key"))
        with pytest.raises(OSError):  # ssl.SSLError and ConnectionError are OSErrors
            with socket.create_connection((host, port), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname=host) as tls:
                    tls.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
                    if not tls.recv(1024):
                        raise ConnectionError("closed")


def test_machines_file_format():
    machines = settings.Machines({"defaults": {"system": {"model": "M"}},
                                  "bmcs": {"a": {"address": "127.0.1.200:8000"},
                                           "b": {"address": "127.0.1.201:8001", "system": {"systemUUID": "ABC"}}}})
    assert machines.system("a")["model"] == "M" and machines.system("b")["systemUUID"] == "abc"
    assert machines.address("b") == ("127.0.1.201", 8001) and machines.by_address("127.0.1.201", 8001) == "b"
    assert machines.by_address("127.0.1.201", 8000) is None


def test_unscheduled_shoot_gets_no_status_and_the_collection_names_it(env):
    """No seed fits: gardener-scheduler reports SchedulingFailed and nothing writes the Shoot's status."""
    garden, name = env["garden"], env["names"]["unsched"]

    def scheduling_failed():
        events = (garden.get("/api/v1/namespaces/%s/events" % NAMESPACE) or {}).get("items", [])
        return [e for e in events if e["involvedObject"].get("name") == name and e["reason"] == "SchedulingFailed"]
    (event,) = wait_for(scheduling_failed, "the SchedulingFailed event of %s" % name)
    assert event["type"] == "Warning" and event["message"] == "Failed to schedule shoot '%s' : %s" % (
        name, UNSCHEDULABLE)
    time.sleep(3 * DELAYS["shoot_step"])  # a scheduled Shoot has its status by now
    obj = shoot_obj(env, "unsched")
    assert not obj.get("status") and not obj["metadata"].get("finalizers"), obj
    verdict = evaluate(obj)
    assert not verdict.terminal and any("the Shoot has no seed" in m for m in verdict.missing), verdict
    old = dict(obj, metadata=dict(obj["metadata"], creationTimestamp="2026-01-01T00:00:00Z"))
    assert evaluate(old).terminal


# ---------------------------------------------------------------------------
# gardenlet's care controller, status.constraints and periodic reconciles (on the Shoot "create", whose
# recorded history starts at its creation; these tests run after the others that use it)

HEALTHY_CONSTRAINTS = [("HibernationPossible", "True", "NoProblematicWebhooks"),
                       ("MaintenancePreconditionsSatisfied", "True", "NoProblematicWebhooks")]


def shoot_url(env, key):
    return CORE + "/namespaces/%s/shoots/%s" % (NAMESPACE, env["names"][key])


def test_care_writes_conditions_and_constraints_apart_from_the_operation(env):
    """care/reconciler.go: the operation start writes no conditions; care initializes and checks them (and
    status.constraints, care/constraints.go) when gardenlet picks the Shoot up and after the success."""
    name = env["names"]["create"]
    obj = wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)
    seen = env["recorders"]["care"].seen[name]
    started = next(v for v in seen if v[:2] == ("Create", "Processing"))
    assert started[2:] == ((), ()), seen  # the reconcile's start writes neither
    first = next(v for v in seen if v[2])
    assert first[:2] == ("Create", "Processing"), seen
    assert dict((t, (st, r)) for t, st, r in first[2])["APIServerAvailable"] == ("Progressing", "APIServerDown")
    assert first[3] == (("HibernationPossible", "Progressing", "ConstraintNotChecked"),
                        ("MaintenancePreconditionsSatisfied", "Progressing", "ConstraintNotChecked")), seen
    # After the success: Progressing until care runs, then True.
    done = [v for v in seen if v[:2] == ("Create", "Succeeded")]
    assert {st for unused, st, unused_too in done[0][2]} == {"Progressing"}, seen
    assert {st for unused, st, unused_too in done[0][3]} == {"Progressing"}, seen
    assert not [v for v in seen if any(r == "ConditionInitialized" for unused, unused_too, r in v[2] + v[3])], seen
    st = status(obj)
    assert [(c["type"], c["status"], c["reason"]) for c in st["constraints"]] == HEALTHY_CONSTRAINTS
    assert {c["message"] for c in st["constraints"]} == {"All webhooks are properly configured."}
    assert all(c["lastUpdateTime"] and c["lastTransitionTime"] for c in st["constraints"] + st["conditions"])
    assert evaluate(obj).ready


def test_care_rechecks_every_sync_period_not_on_a_status_write(env):
    """A condition written wrong is set right by care's next periodic run (the update predicate passes only
    finished reconciles): two disturbances in a row are corrected one care period apart."""
    garden = env["garden"]
    url = shoot_url(env, "create") + "/status?fieldManager=lab-gardenlet"
    before = wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)

    def disturb():
        conditions = status(shoot_obj(env, "create"))["conditions"]
        for cond in conditions:
            if cond["type"] == "APIServerAvailable":
                cond.update(status="False", reason="HealthzRequestFailed", message="written by the test")
        garden.ok("PATCH", url, {"status": {"conditions": conditions}}, MERGE)

    def restored():
        return (condition(shoot_obj(env, "create"), "APIServerAvailable") or {}).get("status") == "True"
    disturb()
    wait_for(restored, "care to set APIServerAvailable True again", DELAYS["care"] + 3)
    first = time.monotonic()
    disturb()
    wait_for(restored, "care's next run", DELAYS["care"] + 3)
    took = time.monotonic() - first
    assert 0.6 * DELAYS["care"] <= took <= DELAYS["care"] + 2, "corrected %.2fs after the previous run" % took
    after = shoot_obj(env, "create")
    assert status(after)["lastOperation"] == status(before)["lastOperation"]  # no reconcile: care alone


def test_periodic_reconcile_at_the_current_generation_and_the_collections_rule(env, tmp_path):
    """reconcile_every: a Reconcile at the same generation; the readiness rule still waits for it, and
    gardener_shoot takes an unchanged, healthy Shoot in it as ready (docs/clusters.md, re-runs)."""
    name = env["names"]["create"]
    before = wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)
    data = yaml.safe_load(config.STANDINS.read_text())
    data["shoots"][name] = {"reconcile_every": PERIODIC_EVERY}
    config.STANDINS.write_text(yaml.safe_dump(data))

    def periodic(obj):
        last = status(obj).get("lastOperation") or {}
        return (obj and last.get("type") == "Reconcile" and last.get("state") == "Processing"
                and last["lastUpdateTime"] != status(before)["lastOperation"]["lastUpdateTime"]
                and status(obj).get("observedGeneration") == obj["metadata"]["generation"])
    try:
        obj = wait_for(lambda: shoot_obj(env, "create"), "a periodic Reconcile", PERIODIC_EVERY + 10, until=periodic)
        assert obj["metadata"]["generation"] == before["metadata"]["generation"]
        assert {c["status"] for c in status(obj)["conditions"]} == {"True"}  # care keeps them while it runs
        assert gardener.periodic_reconcile(obj)
        verdict = evaluate(obj)
        assert not verdict.ready and not verdict.terminal
        assert any(m.startswith("lastOperation Reconcile Processing") for m in verdict.missing), verdict
        # A periodic reconcile that fails transiently (Error, retried): a re-run of gardener_shoot waits for neither.
        data["shoots"][name] = {"reconcile_every": PERIODIC_EVERY, "fail": FAIL, "codes": []}
        config.STANDINS.write_text(yaml.safe_dump(data))
        wait_for(lambda: shoot_obj(env, "create"), "a periodic Reconcile Error", PERIODIC_EVERY + 10,
                 until=lambda o: (status(o).get("lastOperation") or {}).get("state") == "Error")
        play = tmp_path / "periodic.yml"
        play.write_text(json.dumps([{"name": "garden", "hosts": "garden", "gather_facts": False, "module_defaults": {
            "group/c5c3.cobaltcore.cobaltcore": {"kubeconfig": "{{ cobaltcore_kubeconfig }}"}}, "tasks": [
            {"name": "shoot", "c5c3.cobaltcore.gardener_shoot": {
                "namespace": NAMESPACE, "wait_timeout": 5,
                "shoots": [{"name": name, "cluster": PLAYER.name, "spec": before["spec"]}]}}]}]))
        # Waited for, the Shoot (Error, Processing, Error, ...) would fail the task after wait_timeout.
        rc, out = run_playbook(play, COBALTCORE_LAB_DIR=str(config.STATE))
    finally:
        del data["shoots"][name]
        config.STANDINS.write_text(yaml.safe_dump(data))
    result = task_results(out, "shoot")["garden"]
    assert rc == 0, result.get("msg")
    assert not result["changed"] and result["shoots"][0]["result"] == "unchanged", result
    assert result["shoots"][0]["periodic_reconcile"] is True, result
    assert result["shoots"][0]["last_operation"]["type"] == "Reconcile", result


def test_hibernated_shoot_constraints_are_not_checked(env):
    garden = env["garden"]
    wait_for(lambda: settled(shoot_obj(env, "create")), "Shoot reconciled", 30)
    changed = garden.ok("PATCH", shoot_url(env, "create"), {"spec": {"hibernation": {"enabled": True}}}, MERGE)
    obj = wait_for(lambda: shoot_obj(env, "create"), "hibernated Shoot reconciled", 30,
                   until=lambda o: settled(o) and status(o)["observedGeneration"] == changed["metadata"]["generation"])
    st = status(obj)
    assert st["hibernated"] is True
    assert {(c["status"], c["reason"]) for c in st["conditions"]} == {("True", "ConditionNotChecked")}
    # shootHibernatedConstraints: ManualInPlaceWorkersUpdated skipped, HasIgnoredManagedResources only when not True.
    assert [c["type"] for c in st["constraints"]] == [
        "HibernationPossible", "MaintenancePreconditionsSatisfied", "CACertificateValiditiesAcceptable",
        "CRDsWithProblematicConversionWebhooks"]
    assert {(c["status"], c["reason"], c["message"]) for c in st["constraints"]} == {
        ("True", "ConstraintNotChecked", "Shoot cluster has been hibernated.")}


# ---------------------------------------------------------------------------
# metal-operator's ServerMaintenance

def test_server_maintenance_takes_the_server_and_its_end_returns_it_to_available(env):
    """servermaintenance_controller.go and server_controller.go handleMaintenanceState: an unclaimed server
    goes into Maintenance with the maintenance's power; afterwards Initial, discovery, Available."""
    metal_api, names = env["metal"], env["names"]
    wait_for(lambda: available(server(env, "maint_server")), "Server Available", 60)
    url = METAL + "/namespaces/%s/servermaintenances" % PREFIX
    metal_api.ok("POST", url, {"apiVersion": "metal.ironcore.dev/v1alpha1", "kind": "ServerMaintenance",
                               "metadata": {"name": "m1", "namespace": PREFIX},
                               "spec": {"serverRef": {"name": names["maint_server"]}, "policy": "Enforced",
                                        "serverPower": "On"}})
    obj = wait_for(lambda: server(env, "maint_server"), "Server in Maintenance and On", 60,
                   until=lambda o: status(o).get("state") == "Maintenance" and status(o).get("powerState") == "On")
    assert obj["spec"]["serverMaintenanceRef"] == {"namespace": PREFIX, "name": "m1"}
    assert obj["spec"]["power"] == "On"
    maintenance = metal_api.get(url + "/m1")
    assert status(maintenance)["state"] == "InMaintenance"
    assert maintenance["metadata"]["finalizers"] == ["metal.ironcore.dev/servermaintenance"]
    # The collection's claim pre-check holds it back, by the state alone as by the ServerMaintenance.
    summary = ironcore.server_summary(obj)
    assert ironcore.unclaimable_reason(summary) == "in maintenance"
    assert ironcore.unclaimable_reason(summary, ironcore.maintained_servers([maintenance])) == "in maintenance"
    metal_api.ok("DELETE", url + "/m1")
    wait_for(lambda: metal_api.get(url + "/m1") is None, "ServerMaintenance gone", 60)
    obj = wait_for(lambda: available(server(env, "maint_server")), "Server Available again", 60)
    assert "serverMaintenanceRef" not in obj["spec"]
    states = [s for s, unused in env["recorders"]["servers"].seen[names["maint_server"]]]
    after = states[states.index("Maintenance"):]
    order = [s for i, s in enumerate(after) if i == 0 or after[i - 1] != s]
    assert order == ["Maintenance", "Initial", "Discovery", "Available"], states
    assert ironcore.is_claimable(ironcore.server_summary(obj))
