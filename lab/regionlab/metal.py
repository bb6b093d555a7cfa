"""IronCore's real metal-operator on the lab's IronCore cluster, and the lab's BMCs it talks to.

- lab-redfish (lab/go/metal/redfish): one Redfish mock of metal-operator v0.7.0 per machine of
  lab/machines.yaml, on the machine's own loopback address, authentication on (only the rack's login).
- metal-operator (v0.7.0's manager, lab/go/metal): every controller, webhooks off (ENABLE_WEBHOOKS=false,
  as its Tiltfile runs it), its registry on a lab port. A region has it on the IronCore cluster before
  the collection runs, so the lab starts it with the API server, as the Redfish BMCs are there before.

What boot-operator does (a ServerBootConfiguration becomes Ready) and the probe agent that a booted
machine runs (it reports to the registry) are the lab's (standins/boot.py).
"""

import hashlib
import json
from pathlib import Path

import yaml

from . import build, config, pki, processes
from .standins import settings

REDFISH = "lab-redfish"
OPERATOR = "metal-operator"
MODULE = "github.com/ironcore-dev/metal-operator"
STATE = config.STATE / "metal"
# The field manager of the manager's writes (controller-runtime names it after the binary).
FIELD_MANAGER = OPERATOR
# The mock's one ComputerSystem and its manager (bmc/mock/server/data).
SYSTEM = "/redfish/v1/Systems/437XR1138R2"
MANAGER = "/redfish/v1/Managers/BMC"
# Where the manager creates the discovery boot configurations and Ignition Secrets (its default).
MANAGER_NAMESPACE = "default"
# The lab's choices among the manager's flags (a region sets them in the chart's values): short polls and
# resyncs, as the lab's BMCs answer at once (a Redfish read polled longer than 20 s is a refused login, which
# upstream polls for 2 min, holding the Server's reconcile); a discovery that gets no probe report starts
# over after DISCOVERY_TIMEOUT (upstream default 30 min).
DISCOVERY_TIMEOUT = "20s"
FLAGS = ("--server-resync-interval=5s", "--power-polling-interval=250ms", "--resource-polling-interval=1s",
         "--resource-polling-timeout=20s",
         "--registry-resync-interval=2s", "--maintenance-resync-interval=5s",
         "--discovery-timeout=" + DISCOVERY_TIMEOUT, "--probe-image=ghcr.io/ironcore-dev/metalprobe:v0.7.0",
         "--probe-os-image=ghcr.io/ironcore-dev/os-images/gardenlinux:1877.0", "--leader-elect=false",
         "--metrics-bind-address=0", "--zap-log-level=info")


def registry_url():
    return "http://127.0.0.1:%d" % config.METAL_REGISTRY_PORT


def ignition_template():
    """STATE/metal/ignition-template.yaml: the discovery Ignition template of the pinned version."""
    content = (Path(build.module_dir(MODULE, build.required_version("metal", MODULE), "metal")) / "config" / "manager"
               / "ignition-template.yaml").read_text()
    path = STATE / "ignition-template.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != content:
        path.write_text(content)
    return path


def redfish_config(machines):
    """Every machine's BMC: its address, the rack's login and the Redfish fields that make it the machine."""
    username, password = machines.login()
    if not password:
        raise RuntimeError("the lab has no BMC password for %s yet" % machines.rack.get("credentials"))
    bmcs = []
    for name in sorted(machines.bmcs):
        bmc, system = machines.manager(name), machines.system(name)
        manager = {"Manufacturer": bmc["manufacturer"], "Model": bmc["model"], "PartNumber": bmc["sku"],
                   "SerialNumber": bmc["serialNumber"], "FirmwareVersion": bmc["firmwareVersion"]}
        computer = {"UUID": system["systemUUID"], "Manufacturer": system["manufacturer"], "Model": system["model"],
                    "SKU": system["sku"], "SerialNumber": system["serialNumber"], "BiosVersion": system["biosVersion"],
                    "PowerState": system["powerState"],
                    "MemorySummary": {"TotalSystemMemoryGiB": system["totalSystemMemoryGiB"]}}
        bmcs.append({"name": name, "address": machines.bmcs[name]["address"], "username": username,
                     "password": password, "system": SYSTEM, "patches": {MANAGER: manager, SYSTEM: computer}})
    return {"bmcs": bmcs}


def start_redfish():
    """The BMCs, restarted when lab/machines.yaml or the rack's password changed (their digest is an argument)."""
    machines = settings.Machines(yaml.safe_load(config.MACHINES.read_text()) or {})
    text = json.dumps(redfish_config(machines), indent=2, sort_keys=True)
    path = STATE / "redfish.json"
    if not path.exists() or path.read_text() != text:
        pki.write_private(path, text.encode())
    ready = STATE / "redfish.ready"
    argv = [config.BIN / REDFISH, "-config", path, "-state", STATE / "power.json", "-ready", ready,
            "-digest=" + hashlib.sha256(text.encode()).hexdigest()[:16]]
    processes.ensure(REDFISH, argv)
    processes.wait_until(lambda: ready.exists() and processes.pid_of(REDFISH), 30, "the lab's Redfish BMCs", REDFISH)


def operator_ready():
    return processes.answers("http://127.0.0.1:%d/readyz" % config.METAL_HEALTH_PORT)


def start_operator(cluster):
    argv = [config.BIN / OPERATOR, "--registry-url=" + registry_url(),
            "--registry-port=%d" % config.METAL_REGISTRY_PORT,
            "--health-probe-bind-address=127.0.0.1:%d" % config.METAL_HEALTH_PORT,
            "--webhook-port=%d" % config.METAL_WEBHOOK_PORT, "--manager-namespace=" + MANAGER_NAMESPACE,
            "--discovery-ignition-path=%s" % ignition_template()] + list(FLAGS)
    processes.ensure(OPERATOR, argv, env={"KUBECONFIG": str(cluster.kubeconfig), "ENABLE_WEBHOOKS": "false"})
    processes.wait_until(operator_ready, 60, "metal-operator", OPERATOR)


def ironcore(clusters):
    found = [c for c in clusters if config.IRONCORE_GROUP in c.groups]
    if not found:
        raise RuntimeError("inventories/lab has no host in group %s" % config.IRONCORE_GROUP)
    return found[0]


def up(clusters):
    start_redfish()
    start_operator(ironcore(clusters))


def status():
    return {"operator": operator_ready(), "registry": registry_url(),
            "bmcs": bool(processes.pid_of(REDFISH)) and (STATE / "redfish.ready").exists()}
