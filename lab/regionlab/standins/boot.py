"""What the real metal-operator (lab/regionlab/metal.py) needs from outside itself, which cannot run here.

- boot-operator (github.com/ironcore-dev/boot-operator, not served here): it prepares the PXE/HTTP boot of
  a ServerBootConfiguration and marks it Ready; metal-operator sets Pending first and waits for Ready.
- The machine's boot and its probe agent (metal-operator v0.7.0 internal/probe, cmd/metalprobe): a Server
  powered on with its discovery boot configuration Ready boots the probe image, and the agent posts the
  machine's facts to metal-operator's registry (POST /register), again while the registry has none, as
  the agent re-registers periodically. The report comes the "discovery" delay after the power on (the
  PXE boot); a server listed in servers_without_probe never reports, so metal-operator sends it back to
  Initial after its --discovery-timeout.

Objects it leaves alone: those annotated metal.ironcore.dev/operation=ignore, and boot configurations
whose status another field manager writes (a test playing boot-operator itself).
"""

import datetime

import requests

from .. import config, metal
from . import loop, settings
from .client import Kube, Waker, object_path, path

GV = "metal.ironcore.dev/v1alpha1"
MANAGER = "lab-boot-operator"
NAME = "boot-operator-standin"
OPERATION = "metal.ironcore.dev/operation"
IGNORED = {"ignore", "ignore-child-and-self", "ignore-propagated"}
INTERNAL_TYPE = ("metal.ironcore.dev/type", "Internal")


def _ignored(obj):
    return (obj["metadata"].get("annotations") or {}).get(OPERATION) in IGNORED


def probe_report(system, now=None):
    """The registry payload of a probe agent on this machine (internal/api/registry RegistrationPayload)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return {"systemUUID": system["systemUUID"], "data": {
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "systemInfo": {"systemInformation": {"manufacturer": system["manufacturer"], "productName": system["model"],
                                             "serialNumber": system["serialNumber"], "uuid": system["systemUUID"],
                                             "skuNumber": system["sku"]},
                       "biosInformation": {"version": system["biosVersion"]}},
        "networkInterfaces": [{"name": nic["name"], "ipAddresses": list(nic.get("ipAddresses") or []),
                               "macAddress": nic["macAddress"], "carrierStatus": "up"}
                              for nic in system["networkInterfaces"]]}}


class BootOperator(loop.Controller):
    name = NAME

    def __init__(self, cluster):
        super().__init__()
        self.kube = Kube(cluster, MANAGER)
        self.machines = settings.machines(loop.log)
        self.registry = requests.Session()
        self.registry.trust_env = False
        Waker(cluster, [path(GV, p) for p in ("servers", "serverbootconfigurations", "bmcs")], self.wake, loop.log)

    def watched_files(self):
        return [self.settings, self.machines]

    def reconcile(self):
        k = self.kube
        self.sbcs = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
                     for o in k.list(path(GV, "serverbootconfigurations"))}
        self.bmcs = {o["metadata"]["name"]: o for o in k.list(path(GV, "bmcs"))}
        servers = k.list(path(GV, "servers"))
        live = {o["metadata"]["uid"] for o in servers}
        for key in sorted(self.sbcs):
            self.prepare_boot(self.sbcs[key])
        for server in sorted(servers, key=lambda o: o["metadata"]["name"]):
            self.boot(server)
        self.prune(live)

    def prepare_boot(self, sbc):
        """boot-operator: a Pending boot configuration becomes Ready (its boot files are served)."""
        if sbc["metadata"].get("deletionTimestamp") or _ignored(sbc):
            return
        if loop.status_writers(sbc) - {MANAGER, metal.FIELD_MANAGER}:
            return  # a test plays boot-operator
        if (sbc.get("status") or {}).get("state") == "Pending":
            self.kube.patch(object_path(GV, "serverbootconfigurations", sbc), sbc, {"status": {"state": "Ready"}},
                            "status")

    def _machine(self, server):
        """The lab machine whose BMC the Server's BMC reaches, and its system; (None, None) for another."""
        bmc = self.bmcs.get(((server.get("spec") or {}).get("bmcRef") or {}).get("name"))
        access = ((bmc or {}).get("spec") or {}).get("access") or {}
        port = (((bmc or {}).get("spec") or {}).get("protocol") or {}).get("port")
        machines = self.machines.get()
        name = machines.by_address(access.get("ip"), port) if access.get("ip") and port else None
        return (name, machines.system(name)) if name else (None, None)

    def _discovery_boot(self, server):
        """The Server's boot configuration when it is metal-operator's discovery one and Ready."""
        ref = (server.get("spec") or {}).get("bootConfigurationRef") or {}
        sbc = self.sbcs.get((ref.get("namespace"), ref.get("name")))
        annotations = ((sbc or {}).get("metadata") or {}).get("annotations") or {}
        if sbc and annotations.get(INTERNAL_TYPE[0]) == INTERNAL_TYPE[1] and \
                (sbc.get("status") or {}).get("state") == "Ready":
            return sbc
        return None

    def boot(self, server):
        """The machine boots the probe image and its agent reports, while the registry has no report."""
        meta, status = server["metadata"], server.get("status") or {}
        uid = meta["uid"]
        booting = (status.get("state") == "Discovery" and status.get("powerState") == "On"
                   and self._discovery_boot(server) is not None and not _ignored(server))
        if not booting:
            self.done((uid, "probe"))
            return
        name, system = self._machine(server)
        if name is None or meta["name"] in self.settings.get().servers_without_probe:
            return
        if system["systemUUID"] != (server.get("spec") or {}).get("systemUUID"):
            return  # another machine's report would not be this server's
        if not self.after((uid, "probe"), self.delay("discovery")):
            return
        url = metal.registry_url()
        try:
            if self.registry.get("%s/systems/%s" % (url, system["systemUUID"]), timeout=5).status_code == 200:
                return
            resp = self.registry.post(url + "/register", json=probe_report(system), timeout=5)
        except requests.RequestException as exc:
            self.log("probe of %s: registry unreachable: %s" % (meta["name"], exc))
            self.next_due = min(self.next_due, 1.0)
            return
        if resp.status_code not in (200, 201):
            self.log("probe of %s: registry answered %d: %s" % (meta["name"], resp.status_code, resp.text[:200]))
            self.next_due = min(self.next_due, 1.0)
            return
        self.log("probe of %s (%s): registered" % (meta["name"], name))
        # The agent re-registers periodically: look again while the Server is in Discovery.
        self.next_due = min(self.next_due, 2.0)


def main():
    BootOperator(metal.ironcore(config.clusters())).run()
