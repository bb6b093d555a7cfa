"""metal-operator stand-in: IronCore metal.ironcore.dev/v1alpha1 as metal-operator v0.7.0 writes it.

Modelled on github.com/ironcore-dev/metal-operator v0.7.0, internal/controller/
bmc_controller.go, server_controller.go (with its Maintenance state), serverclaim_controller.go, taints.go,
servermaintenance_controller.go, serverreadinessrule{,server}_controller.go,
serverbootconfiguration_controller.go and pkg/bmcutils/bmcutils.go; the machines behind the
BMCs come from lab/machines.yaml instead of Redfish. It also plays the boot-operator's one
visible part: a ServerBootConfiguration becomes Ready.

Objects it leaves alone: those annotated metal.ironcore.dev/operation=ignore (as upstream),
Servers without spec.bmcRef, claims of such Servers, and any object whose status another
field manager writes (a test playing the operator itself).
"""

import base64
import copy

from .. import config
from . import loop, settings
from .client import Kube, Waker, object_path, path

GV = "metal.ironcore.dev/v1alpha1"
MANAGER = "lab-metal-operator"
NAME = "metal-operator-standin"

BMC_FINALIZER = "metal.ironcore.dev/bmc"
SERVER_FINALIZER = "metal.ironcore.dev/server"
CLAIM_FINALIZER = "metal.ironcore.dev/serverclaim"
MAINTENANCE_FINALIZER = "metal.ironcore.dev/servermaintenance"
MAINTENANCE_NEEDED = "metal.ironcore.dev/maintenance-needed"
MAINTENANCE_APPROVED = "metal.ironcore.dev/maintenance-approved"
OPERATION = "metal.ironcore.dev/operation"
RULE_FINALIZER = "readiness.metal.ironcore.dev/cleanup-taints"
RULE_BOOTSTRAPPED = "readiness.metal.ironcore.dev/bootstrap-completed-"
IGNORED = {"ignore", "ignore-child-and-self", "ignore-propagated"}
INTERNAL_TYPE = "metal.ironcore.dev/type"
DEFAULT_OS_IMAGE = "metal.ironcore.dev/is-default-os-image"
# metal-operator's --manager-namespace default: where the discovery boot configurations go.
MANAGER_NAMESPACE = "default"
REDFISH = ("Redfish", "RedfishLocal", "RedfishWithRegistryPatch")
SYSTEM_FACTS = ("manufacturer", "model", "sku", "serialNumber", "biosVersion", "totalSystemMemory",
                "processors", "storages")


AUTH_FAILED = "401 Unauthorized"


def _credentials(secret):
    """(username, password) of a BMCSecret: data (base64) over stringData, as bmcutils reads them."""
    found = []
    for key in ("username", "password"):
        if key in (secret.get("data") or {}):
            try:
                found.append(base64.b64decode(secret["data"][key]).decode())
            except (ValueError, UnicodeDecodeError):
                found.append(None)
        else:
            found.append((secret.get("stringData") or {}).get(key))
    return tuple(found)


def _name(obj):
    return obj["metadata"]["name"]


def _ignored(obj):
    return (obj["metadata"].get("annotations") or {}).get(OPERATION) in IGNORED


def _finalizers(obj):
    return list(obj["metadata"].get("finalizers") or [])


def selector_matches(selector, labels):
    """metav1.LabelSelector semantics (matchLabels and matchExpressions)."""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def _same_taint(a, b):
    """equalTaints: key, effect and value."""
    return (a.get("key"), a.get("effect"), a.get("value")) == (b.get("key"), b.get("effect"), b.get("value"))


def tolerates(taints, tolerations):
    """Only NoBind taints block binding (internal/controller/taints.go)."""
    for taint in taints or []:
        if taint.get("effect") != "NoBind":
            continue
        if not any(_toleration_matches(t, taint) for t in tolerations or []):
            return False
    return True


def _toleration_matches(toleration, taint):
    if toleration.get("key") != taint.get("key"):
        return False
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    operator = toleration.get("operator", "")
    if operator == "Exists":
        return True
    if operator in ("Equal", ""):
        return toleration.get("value", "") == taint.get("value", "")
    return False


class MetalOperator(loop.Controller):
    name = NAME

    def __init__(self, cluster):
        super().__init__()
        self.kube = Kube(cluster, MANAGER)
        self.machines = settings.machines(loop.log)
        watched = ("bmcs", "bmcsecrets", "servers", "serverclaims", "serverbootconfigurations", "endpoints",
                   "serverreadinessrules", "servermaintenances")
        Waker(cluster, [path(GV, p) for p in watched], self.wake, loop.log)

    # Writes --------------------------------------------------------------------

    def _write(self, plural, obj, patch, status=False, cache=None):
        updated = self.kube.patch(object_path(GV, plural, obj), obj, patch, "status" if status else None)
        if updated is not None and cache is not None:
            cache[_name(updated)] = updated
        return updated

    def _status(self, plural, obj, changes, cache=None):
        """Patch only the status fields that differ (None removes one); False when nothing differs."""
        current = obj.get("status") or {}
        diff = {k: v for k, v in changes.items() if current.get(k) != v and not (v is None and k not in current)}
        if not diff:
            return False
        self._write(plural, obj, {"status": diff}, status=True, cache=cache)
        return True

    def _set_finalizers(self, plural, obj, finalizers, cache=None):
        return self._write(plural, obj, {"metadata": {"finalizers": finalizers or None}}, cache=cache)

    # Pass ----------------------------------------------------------------------

    def watched_files(self):
        return [self.settings, self.machines]

    def reconcile(self):
        k = self.kube
        self.bmcs = {_name(o): o for o in k.list(path(GV, "bmcs"))}
        self.secrets = {_name(o): o for o in k.list(path(GV, "bmcsecrets"))}
        self.endpoints = {_name(o): o for o in k.list(path(GV, "endpoints"))}
        self.servers = {_name(o): o for o in k.list(path(GV, "servers"))}
        self.claims = {(o["metadata"]["namespace"], _name(o)): o for o in k.list(path(GV, "serverclaims"))}
        self.sbcs = {(o["metadata"]["namespace"], _name(o)): o for o in k.list(path(GV, "serverbootconfigurations"))}
        self.rules = {_name(o): o for o in k.list(path(GV, "serverreadinessrules"))}
        self.maintenances = {(o["metadata"]["namespace"], _name(o)): o for o in k.list(path(GV, "servermaintenances"))}
        # isUnderMaintenanceQueue: a ServerMaintenance naming the server holds it back from claims.
        self.maintained = {((o.get("spec") or {}).get("serverRef") or {}).get("name")
                           for o in self.maintenances.values()}
        live = set()
        for group in (self.bmcs, self.servers, self.claims, self.sbcs, self.maintenances):
            live.update(o["metadata"]["uid"] for o in group.values())
        for name in sorted(self.bmcs):
            self.reconcile_bmc(self.bmcs[name])
        for name in sorted(self.rules):
            self.reconcile_readiness_rule(self.rules[name])
        for key in sorted(self.maintenances):
            self.reconcile_maintenance(self.maintenances[key])
        for name in sorted(self.servers):
            self.apply_readiness_rules(self.servers[name])
            self.reconcile_server(self.servers[name])
        for key in sorted(self.claims):
            self.reconcile_claim(self.claims[key])
        for key in sorted(self.sbcs):
            self.reconcile_boot_configuration(self.sbcs[key])
        self.prune(live)

    # BMC (bmc_controller.go) ---------------------------------------------------

    def bmc_error(self, bmc):
        """Why metal-operator gets no BMC client (bmcutils.GetBMCClientFromBMC), or None.

        A refused login is AUTH_FAILED (the BMC answers 401).
        """
        spec = bmc.get("spec") or {}
        if spec.get("endpointRef") and spec["endpointRef"].get("name") not in self.endpoints:
            return 'failed to get Endpoints for BMC: endpoints.metal.ironcore.dev "%s" not found' % (
                spec["endpointRef"].get("name"))
        secret_name = (spec.get("bmcSecretRef") or {}).get("name", "")
        secret = self.secrets.get(secret_name)
        if secret is None:
            return 'failed to get BMC secret: bmcsecrets.metal.ironcore.dev "%s" not found' % secret_name
        for key in ("username", "password"):
            if key not in (secret.get("data") or {}) and key not in (secret.get("stringData") or {}):
                return ("failed to get credentials from BMC secret: cannot find value in BMCSecret '%s' for key "
                        "'%s' in data nor in stringData" % (secret_name, key))
        protocol = (spec.get("protocol") or {}).get("name")
        if protocol not in REDFISH:
            return "unsupported BMC protocol %s" % protocol
        login = self.machines.get().login(_name(bmc))
        if login is not None and _credentials(secret) != login:
            return AUTH_FAILED
        return None

    def _address(self, bmc):
        spec = bmc.get("spec") or {}
        if spec.get("endpointRef"):
            endpoint = (self.endpoints.get(spec["endpointRef"]["name"]) or {}).get("spec") or {}
            return endpoint.get("ip"), endpoint.get("macAddress")
        access = spec.get("access") or {}
        return access.get("ip"), access.get("macAddress")

    def reconcile_bmc(self, bmc):
        meta = bmc["metadata"]
        if meta.get("deletionTimestamp"):
            if BMC_FINALIZER in _finalizers(bmc):
                self._set_finalizers("bmcs", bmc, [f for f in _finalizers(bmc) if f != BMC_FINALIZER])
            return
        if _ignored(bmc) or loop.foreign(bmc, MANAGER):
            return
        # The BMC answers (or fails to) only after its delay.
        if not self.after((meta["uid"], "bmc"), self.delay("bmc")):
            return
        status = bmc.get("status") or {}
        conditions = copy.deepcopy(status.get("conditions") or [])
        error = self.bmc_error(bmc)
        if error == AUTH_FAILED:
            # updateReadyConditionOnBMCFailure, HTTP 401: the state stays what it was (an Enabled BMC
            # whose password changed stays Enabled).
            if loop.set_condition(conditions, "Ready", "False", "AuthenticationFailed", "BMC credentials are invalid"):
                self._status("bmcs", bmc, {"conditions": conditions}, cache=self.bmcs)
                self.log("BMC %s: AuthenticationFailed" % meta["name"])
            return
        if error:
            # updateReadyConditionOnBMCFailure: not an HTTP error, so reason UnknownError; state unchanged.
            if loop.set_condition(conditions, "Ready", "False", "UnknownError", "BMC connection error: %s" % error):
                self._status("bmcs", bmc, {"conditions": conditions}, cache=self.bmcs)
            return
        loop.set_condition(conditions, "Ready", "True", "Connected", "BMC is connected")
        ip, mac = self._address(bmc)
        facts = self.machines.get().manager(meta["name"])
        changes = {"conditions": conditions, "ip": ip, "macAddress": mac or None,
                   "manufacturer": facts.get("manufacturer"), "state": "Enabled", "powerState": "On",
                   "firmwareVersion": facts.get("firmwareVersion"), "serialNumber": facts.get("serialNumber"),
                   "sku": facts.get("sku"), "model": facts.get("model")}
        if self._status("bmcs", bmc, changes, cache=self.bmcs):
            self.log("BMC %s: Enabled" % meta["name"])
        self.discover_servers(self.bmcs[meta["name"]])

    def discover_servers(self, bmc):
        """One Server per system: <bmc>-system-<index>, BMC labels, controller reference (discoverServers)."""
        meta = bmc["metadata"]
        labels = meta.get("labels") or {}
        owner = {"apiVersion": GV, "kind": "BMC", "name": meta["name"], "uid": meta["uid"],
                 "controller": True, "blockOwnerDeletion": True}
        for index, system in enumerate(self.machines.get().systems(meta["name"])):
            name = "%s-system-%d" % (meta["name"], index)
            spec = {"systemUUID": system["systemUUID"], "systemURI": system["systemURI"],
                    "bmcRef": {"name": meta["name"]}}
            server = self.servers.get(name)
            if server is None:
                body = {"apiVersion": GV, "kind": "Server",
                        "metadata": {"name": name, "ownerReferences": [owner]}, "spec": spec}
                if labels:
                    body["metadata"]["labels"] = dict(labels)
                created = self.kube.create(path(GV, "servers"), body)
                if created:
                    self.servers[name] = created
                    self.log("Server %s: created for BMC %s" % (name, meta["name"]))
                continue
            patch = {}
            have = server["metadata"].get("labels") or {}
            changed_labels = {k: v for k, v in labels.items() if have.get(k) != v}
            if changed_labels:
                patch.setdefault("metadata", {})["labels"] = changed_labels
            changed_spec = {k: v for k, v in spec.items() if (server.get("spec") or {}).get(k) != v}
            if changed_spec:
                patch["spec"] = changed_spec
            owners = server["metadata"].get("ownerReferences") or []
            if not any(o.get("uid") == meta["uid"] for o in owners) and not any(o.get("controller") for o in owners):
                patch.setdefault("metadata", {})["ownerReferences"] = owners + [owner]
            if patch:
                self._write("servers", server, patch, cache=self.servers)

    # Server (server_controller.go) ---------------------------------------------

    def _system(self, server):
        bmc_name = server["spec"]["bmcRef"]["name"]
        systems = self.machines.get().systems(bmc_name)
        for system in systems:
            if system["systemUUID"] == (server["spec"].get("systemUUID") or "").lower():
                return system
        return systems[0]

    def _boot_configuration(self, server):
        ref = (server.get("spec") or {}).get("bootConfigurationRef")
        return self.sbcs.get((ref.get("namespace"), ref.get("name"))) if ref else None

    def _boot_ready(self, server):
        sbc = self._boot_configuration(server)
        return bool(sbc) and (sbc.get("status") or {}).get("state") == "Ready"

    def _spec(self, server, changes):
        """Patch spec fields that differ (None removes); True when a write was sent."""
        spec = server.get("spec") or {}
        diff = {k: v for k, v in changes.items() if spec.get(k) != v and not (v is None and k not in spec)}
        if diff:
            self._write("servers", server, {"spec": diff}, cache=self.servers)
        return bool(diff)

    def _power(self, server, want):
        """The lab BMC switches the system: PoweringOn/Off at once, On/Off after the power delay.

        Returns True while a transition is under way (or was just written).
        """
        uid = server["metadata"]["uid"]
        current = (server.get("status") or {}).get("powerState")
        if not want or current == want:
            self.done((uid, "power", want))
            return False
        moving = "PoweringOn" if want == "On" else "PoweringOff"
        if current != moving:
            self._status("servers", server, {"powerState": moving}, cache=self.servers)
            self.after((uid, "power", want), self.delay("power"))
            return True
        if self.after((uid, "power", want), self.delay("power")):
            self._status("servers", server, {"powerState": want}, cache=self.servers)
            self.done((uid, "power", want))
        return True

    def reconcile_server(self, server):
        meta, spec = server["metadata"], server.get("spec") or {}
        if not spec.get("bmcRef"):
            return
        if meta.get("deletionTimestamp"):
            if (server.get("status") or {}).get("state") == "Maintenance" and spec["bmcRef"]["name"] in self.bmcs:
                return  # shouldDelete: postponed while in Maintenance (unless its BMC is gone)
            if SERVER_FINALIZER in _finalizers(server):
                sbc = self._boot_configuration(server)
                if sbc:
                    self.kube.delete(object_path(GV, "serverbootconfigurations", sbc))
                self._set_finalizers("servers", server, [f for f in _finalizers(server) if f != SERVER_FINALIZER])
            return
        if _ignored(server) or loop.foreign(server, MANAGER):
            return
        state = (server.get("status") or {}).get("state", "")
        if state == "":
            self._status("servers", server, {"state": "Initial"}, cache=self.servers)
            return
        bmc = self.bmcs.get(spec["bmcRef"]["name"])
        if bmc is None or (bmc.get("status") or {}).get("state") not in ("Enabled", None, "") or self.bmc_error(bmc):
            return  # no BMC client: upstream requeues
        if SERVER_FINALIZER not in _finalizers(server):
            self._set_finalizers("servers", server, _finalizers(server) + [SERVER_FINALIZER], cache=self.servers)
            return
        if state != "Initial" and spec.get("serverMaintenanceRef") and state != "Maintenance":
            self._status("servers", server, {"state": "Maintenance"}, cache=self.servers)
            self.log("Server %s: Maintenance (%s/%s)" % (meta["name"], spec["serverMaintenanceRef"].get("namespace"),
                                                         spec["serverMaintenanceRef"].get("name")))
            return
        # No case writes Error (server_controller.go declares it only): a Server in it is left alone.
        handler = {"Initial": self._initial, "Discovery": self._discovery, "Available": self._available,
                   "Reserved": self._reserved, "Released": self._released,
                   "Maintenance": self._maintenance}.get(state)
        if handler:
            handler(server)

    def _initial(self, server):
        status, spec = server.get("status") or {}, server.get("spec") or {}
        system = self._system(server)
        if not status.get("powerState"):
            self._status("servers", server, {"powerState": system.get("powerState", "Off")}, cache=self.servers)
            return
        # ensureInitialConditions: no desired power yet and the system is off -> desired Off.
        if not spec.get("power") and status.get("powerState") == "Off":
            self._spec(server, {"power": "Off"})
            return
        if self._power(server, spec.get("power")):
            return
        name = server["metadata"]["name"]
        if (MANAGER_NAMESPACE, name) not in self.sbcs:
            sbc = {"apiVersion": GV, "kind": "ServerBootConfiguration",
                   "metadata": {"name": name, "namespace": MANAGER_NAMESPACE,
                                "annotations": {INTERNAL_TYPE: "Internal", DEFAULT_OS_IMAGE: "true"}},
                   "spec": {"serverRef": {"name": name}, "ignitionSecretRef": {"name": name}}}
            created = self.kube.create(path(GV, "serverbootconfigurations", MANAGER_NAMESPACE), sbc)
            if created:
                self.sbcs[(MANAGER_NAMESPACE, name)] = created
        if self._spec(server, {"bootConfigurationRef": {"namespace": MANAGER_NAMESPACE, "name": name}}):
            return
        facts = {key: system[key] for key in SYSTEM_FACTS if key in system}
        facts["state"] = "Discovery"
        self._status("servers", server, facts, cache=self.servers)
        self.log("Server %s: Discovery" % name)

    def _discovery(self, server):
        uid, name = server["metadata"]["uid"], server["metadata"]["name"]
        if not self._boot_ready(server):
            return
        if self._spec(server, {"power": "On"}) or self._power(server, "On"):
            return
        if name in self.settings.get().servers_without_probe:
            # handleDiscoveryState: no registry entry within --discovery-timeout (the last status
            # update is older): back to Initial, which starts the discovery again, endlessly.
            if self.after((uid, "discovery-timeout"), self.delay("discovery_timeout")):
                self.done((uid, "discovery-timeout"))
                self._status("servers", server, {"state": "Initial"}, cache=self.servers)
                self.log("Server %s: Initial (probe did not report within the discovery timeout)" % name)
            return
        self.done((uid, "discovery-timeout"))
        # The probe agent boots and reports to the registry after the discovery delay.
        if not self.after((uid, "discovery"), self.delay("discovery")):
            return
        self.done((uid, "discovery"))
        system = self._system(server)
        self._status("servers", server, {"networkInterfaces": system.get("networkInterfaces"), "state": "Available"},
                     cache=self.servers)
        self.log("Server %s: Available" % name)

    def _available(self, server):
        status, spec = server.get("status") or {}, server.get("spec") or {}
        if status.get("powerState") != "Off":
            if not self._spec(server, {"power": "Off"}):
                self._power(server, "Off")
            return
        sbc = self._boot_configuration(server)
        if spec.get("bootConfigurationRef"):
            # ensureInitialBootConfigurationIsDeleted: only the discovery one (annotated Internal).
            if sbc is not None and (sbc["metadata"].get("annotations") or {}).get(INTERNAL_TYPE) == "Internal":
                self.kube.delete(object_path(GV, "serverbootconfigurations", sbc))
                self._spec(server, {"bootConfigurationRef": None})
                return
        if spec.get("serverClaimRef"):
            self._status("servers", server, {"state": "Reserved"}, cache=self.servers)
            self.log("Server %s: Reserved for %s/%s" % (server["metadata"]["name"], spec["serverClaimRef"].get(
                "namespace"), spec["serverClaimRef"].get("name")))

    def _powered_off(self, server):
        """ensureServerPoweredOff: desired Off, boot configuration dropped, WaitingForPowerOff until Off."""
        spec, status = server.get("spec") or {}, server.get("status") or {}
        if spec.get("power") != "Off" or spec.get("bootConfigurationRef"):
            self._spec(server, {"power": "Off", "bootConfigurationRef": None})
            return False
        conditions = copy.deepcopy(status.get("conditions") or [])
        generation = server["metadata"].get("generation")
        if status.get("powerState") == "Off":
            if any(c.get("type") == "WaitingForPowerOff" for c in conditions) and loop.set_condition(
                    conditions, "WaitingForPowerOff", "False", "PowerOffConfirmed", "BMC confirmed PowerState=Off",
                    observed_generation=generation):
                self._status("servers", server, {"conditions": conditions}, cache=self.servers)
                return False
            return True
        message = 'Waiting for BMC to confirm power off (current: "%s")' % status.get("powerState", "")
        if loop.set_condition(conditions, "WaitingForPowerOff", "True", "WaitingForPowerOff", message,
                              observed_generation=generation):
            self._status("servers", server, {"conditions": conditions}, cache=self.servers)
            return False
        self._power(server, "Off")
        return False

    def _reserved(self, server):
        spec = server.get("spec") or {}
        ref = spec.get("serverClaimRef")
        if not ref:
            self._status("servers", server, {"state": "Available"}, cache=self.servers)
            return
        if (ref.get("namespace"), ref.get("name")) not in self.claims:
            if not self._powered_off(server):
                return
            if spec.get("reclaimPolicy") == "Retain":
                self._status("servers", server, {"state": "Released"}, cache=self.servers)
            else:
                self._spec(server, {"serverClaimRef": None})
            self.log("Server %s: released by %s/%s" % (server["metadata"]["name"], ref.get("namespace"),
                                                       ref.get("name")))
            return
        if not self._boot_ready(server):
            return
        self._power(server, spec.get("power"))

    def _released(self, server):
        if self._powered_off(server) and not (server.get("spec") or {}).get("serverClaimRef"):
            self._status("servers", server, {"state": "Available"}, cache=self.servers)

    def _maintenance(self, server):
        """handleMaintenanceState: a dangling ref is cleared; without a ref (and no pending maintenance)
        back to Initial (unclaimed: discovery again) or Reserved; else the power the maintenance set."""
        spec = server.get("spec") or {}
        ref = spec.get("serverMaintenanceRef")
        if ref and (ref.get("namespace"), ref.get("name")) not in self.maintenances:
            self._spec(server, {"serverMaintenanceRef": None})
            return
        if not ref:
            if self._pending_maintenances(server):
                return
            state = "Reserved" if spec.get("serverClaimRef") else "Initial"
            self._status("servers", server, {"state": state}, cache=self.servers)
            self.log("Server %s: %s (maintenance over)" % (_name(server), state))
            return
        self._power(server, spec.get("power"))

    def _pending_maintenances(self, server):
        """hasPendingMaintenances: an Enforced one, or an OwnerApproval one for an unclaimed server or an
        approved claim."""
        owner_approval = False
        for maintenance in self.maintenances.values():
            mspec = maintenance.get("spec") or {}
            if maintenance["metadata"].get("deletionTimestamp") or (mspec.get("serverRef") or {}).get(
                    "name") != _name(server):
                continue
            if mspec.get("policy") == "Enforced":
                return True
            owner_approval |= mspec.get("policy") == "OwnerApproval"
        if not owner_approval:
            return False
        ref = (server.get("spec") or {}).get("serverClaimRef")
        if not ref:
            return True
        claim = self.claims.get((ref.get("namespace"), ref.get("name")))
        return claim is not None and MAINTENANCE_APPROVED in (claim["metadata"].get("labels") or {})

    # ServerMaintenance (servermaintenance_controller.go) ------------------------

    def _maintenance_state(self, maintenance, state):
        if (maintenance.get("status") or {}).get("state") != state:
            self._write("servermaintenances", maintenance, {"status": {"state": state}}, status=True)
            self.log("ServerMaintenance %s/%s: %s" % (maintenance["metadata"]["namespace"], _name(maintenance), state))
            return True
        return False

    def reconcile_maintenance(self, maintenance):
        meta, spec = maintenance["metadata"], maintenance.get("spec") or {}
        server_name = (spec.get("serverRef") or {}).get("name")
        if meta.get("deletionTimestamp"):
            if MAINTENANCE_FINALIZER in _finalizers(maintenance) and server_name:
                server = self.servers.get(server_name)
                if server is not None and self._ours(server):
                    self._maintenance_cleanup(maintenance, server)
                self._set_finalizers("servermaintenances", maintenance,
                                     [f for f in _finalizers(maintenance) if f != MAINTENANCE_FINALIZER])
            return
        if not server_name or _ignored(maintenance) or loop.foreign(maintenance, MANAGER):
            return
        server = self.servers.get(server_name)
        if server is None:
            self._maintenance_state(maintenance, "Pending")
            return
        if not self._ours(server):
            return
        ref = (server.get("spec") or {}).get("serverMaintenanceRef")
        if ref and (ref.get("namespace"), ref.get("name")) != (meta["namespace"], meta["name"]):
            self._maintenance_state(maintenance, "Pending")  # another maintenance holds the server
            return
        if MAINTENANCE_FINALIZER not in _finalizers(maintenance):
            self._set_finalizers("servermaintenances", maintenance, _finalizers(maintenance) + [MAINTENANCE_FINALIZER])
            return
        state = (maintenance.get("status") or {}).get("state")
        if not state:
            self._maintenance_state(maintenance, "Pending")
        elif state == "Pending":
            self._maintenance_pending(maintenance, server)
        elif state == "InMaintenance":
            self._in_maintenance(maintenance, server)

    def _runs_before(self, a, b):
        """shouldRunBefore: priority, then Enforced, then the older, then namespace and name."""
        sa, sb = a.get("spec") or {}, b.get("spec") or {}
        if int(sa.get("priority") or 0) != int(sb.get("priority") or 0):
            return int(sa.get("priority") or 0) > int(sb.get("priority") or 0)
        if sa.get("policy") != sb.get("policy"):
            return sa.get("policy") == "Enforced"
        ka = (a["metadata"].get("creationTimestamp") or "", a["metadata"]["namespace"], _name(a))
        kb = (b["metadata"].get("creationTimestamp") or "", b["metadata"]["namespace"], _name(b))
        return ka < kb

    def _maintenance_pending(self, maintenance, server):
        """handlePendingState: an unclaimed server is taken at once; a claimed one gets the claim labelled
        maintenance-needed and is taken when Enforced, or OwnerApproval once the claim is approved."""
        meta, spec = maintenance["metadata"], maintenance.get("spec") or {}
        for other in self.maintenances.values():
            if other is maintenance or other["metadata"].get("deletionTimestamp"):
                continue
            if ((other.get("spec") or {}).get("serverRef") or {}).get("name") != _name(server):
                continue
            if (other.get("status") or {}).get("state") in (None, "", "Pending") and self._runs_before(other, maintenance):
                return  # shouldDeferToHigherPriorityMaintenance
        claim_ref = (server.get("spec") or {}).get("serverClaimRef")
        take = not claim_ref
        if claim_ref:
            claim = self.claims.get((claim_ref.get("namespace"), claim_ref.get("name")))
            if claim is None:
                return
            labels = claim["metadata"].get("labels") or {}
            if labels.get(MAINTENANCE_NEEDED) != "true":
                self._write("serverclaims", claim, {"metadata": {"labels": {MAINTENANCE_NEEDED: "true"}}})
                return
            take = spec.get("policy") == "Enforced" or (
                spec.get("policy") == "OwnerApproval" and MAINTENANCE_APPROVED in labels)
        if not take:
            return
        if not (server.get("spec") or {}).get("serverMaintenanceRef"):
            self._spec(server, {"serverMaintenanceRef": {"namespace": meta["namespace"], "name": meta["name"]}})
        self._maintenance_state(maintenance, "InMaintenance")

    def _ensure_boot_configuration(self, owner_kind, meta, body_spec):
        """The ServerBootConfiguration <owner> (same namespace, owned by it) with body_spec: the one that is so
        already, or None after creating or patching it (the next pass goes on)."""
        key = (meta["namespace"], meta["name"])
        sbc = self.sbcs.get(key)
        if sbc is None:
            owner = {"apiVersion": GV, "kind": owner_kind, "name": meta["name"], "uid": meta["uid"],
                     "controller": True, "blockOwnerDeletion": True}
            created = self.kube.create(path(GV, "serverbootconfigurations", meta["namespace"]), {
                "apiVersion": GV, "kind": "ServerBootConfiguration",
                "metadata": {"name": meta["name"], "namespace": meta["namespace"], "ownerReferences": [owner]},
                "spec": body_spec})
            if created:
                self.sbcs[key] = created
            return None
        if any((sbc.get("spec") or {}).get(k) != v for k, v in body_spec.items()):
            self.kube.patch(object_path(GV, "serverbootconfigurations", sbc), sbc, {"spec": body_spec})
            return None
        return sbc

    def _in_maintenance(self, maintenance, server):
        """handleInMaintenanceState: the template's boot configuration (<maintenance>, owned by it) until
        Ready, then the maintenance's serverPower (and locatorLED) on the server."""
        meta, spec = maintenance["metadata"], maintenance.get("spec") or {}
        template = spec.get("serverBootConfigurationTemplate")
        if template:
            sbc = self._ensure_boot_configuration("ServerMaintenance", meta, copy.deepcopy(template.get("spec") or {}))
            if sbc is None:
                return
            if self._spec(server, {"maintenanceBootConfigurationRef": {"namespace": meta["namespace"],
                                                                        "name": meta["name"]}}):
                return
            sbc_state = (sbc.get("status") or {}).get("state")
            if sbc_state == "Error":
                self._maintenance_state(maintenance, "Failed")
                return
            if sbc_state != "Ready":
                return
        # setAndPatchServerState: an empty serverPower removes spec.power (omitempty in a merge patch).
        changes = {"power": spec.get("serverPower") or None}
        if spec.get("locatorLED"):
            changes["indicatorLED"] = spec["locatorLED"]
        self._spec(server, changes)

    def _maintenance_cleanup(self, maintenance, server):
        """cleanup: the server's refs go (and the locator LED off), the maintenance's boot configuration
        is deleted, and a claim with no other maintenance loses the maintenance labels."""
        meta, spec = maintenance["metadata"], maintenance.get("spec") or {}
        sspec = server.get("spec") or {}
        ref = sspec.get("serverMaintenanceRef") or {}
        if (ref.get("namespace"), ref.get("name")) != (meta["namespace"], meta["name"]):
            return
        changes = {"serverMaintenanceRef": None}
        if spec.get("locatorLED"):
            changes["indicatorLED"] = "Off"
        boot = sspec.get("maintenanceBootConfigurationRef")
        if boot:
            sbc = self.sbcs.get((boot.get("namespace"), boot.get("name")))
            if sbc is not None:
                self.kube.delete(object_path(GV, "serverbootconfigurations", sbc))
            changes["maintenanceBootConfigurationRef"] = None
        self._spec(server, changes)
        claim_ref = sspec.get("serverClaimRef")
        if not claim_ref:
            return
        others = [m for m in self.maintenances.values() if m is not maintenance
                  and not m["metadata"].get("deletionTimestamp")
                  and ((m.get("spec") or {}).get("serverRef") or {}).get("name") == _name(server)]
        claim = self.claims.get((claim_ref.get("namespace"), claim_ref.get("name")))
        if not others and claim is not None:
            labels = claim["metadata"].get("labels") or {}
            drop = {k: None for k in (MAINTENANCE_APPROVED, MAINTENANCE_NEEDED) if k in labels}
            if drop:
                self._write("serverclaims", claim, {"metadata": {"labels": drop}})

    # ServerReadinessRule (serverreadinessrule{,server}_controller.go) ----------

    def reconcile_readiness_rule(self, rule):
        """Finalizer on a new rule; on deletion its taint leaves the servers it selects, then the finalizer."""
        finalizers = _finalizers(rule)
        if not rule["metadata"].get("deletionTimestamp"):
            if RULE_FINALIZER not in finalizers:
                self._set_finalizers("serverreadinessrules", rule, finalizers + [RULE_FINALIZER], cache=self.rules)
            return
        if RULE_FINALIZER not in finalizers:
            return
        spec = rule.get("spec") or {}
        for server in self.servers.values():
            if selector_matches(spec.get("serverSelector") or {}, server["metadata"].get("labels") or {}):
                taints = (server.get("spec") or {}).get("taints") or []
                kept = [t for t in taints if not _same_taint(t, spec.get("taint") or {})]
                if kept != taints:
                    self._write("servers", server, {"spec": {"taints": kept or None}}, cache=self.servers)
        self._set_finalizers("serverreadinessrules", rule, [f for f in finalizers if f != RULE_FINALIZER])

    def apply_readiness_rules(self, server):
        """Every rule selecting the server: its taint goes when the server's conditions have the required
        statuses, and is put on when not (BootstrapOnly: not again once passed)."""
        taints = list((server.get("spec") or {}).get("taints") or [])
        annotations = dict(server["metadata"].get("annotations") or {})
        before = (list(taints), dict(annotations))
        conditions = {c.get("type"): c.get("status") for c in (server.get("status") or {}).get("conditions") or []}
        for name in sorted(self.rules):
            rule = self.rules[name]
            spec = rule.get("spec") or {}
            done = RULE_BOOTSTRAPPED + name
            if rule["metadata"].get("deletionTimestamp"):
                continue
            if spec.get("enforcementMode") == "BootstrapOnly" and done in annotations:
                continue
            if not selector_matches(spec.get("serverSelector") or {}, server["metadata"].get("labels") or {}):
                continue
            taint = spec.get("taint") or {}
            wanted = {c.get("type"): c.get("requiredStatus") for c in spec.get("conditions") or []}
            if all(conditions.get(ctype) == status for ctype, status in wanted.items()):
                taints = [t for t in taints if not _same_taint(t, taint)]
                if spec.get("enforcementMode") == "BootstrapOnly":
                    annotations[done] = "true"
            elif not any(_same_taint(t, taint) for t in taints):
                taints.append(taint)
        if (taints, annotations) != before:
            patch = {"spec": {"taints": taints or None}}
            if annotations != before[1]:
                patch["metadata"] = {"annotations": {k: v for k, v in annotations.items() if k not in before[1]}}
            self._write("servers", server, patch, cache=self.servers)

    # ServerClaim (serverclaim_controller.go) -----------------------------------

    def _ours(self, server):
        return bool((server.get("spec") or {}).get("bmcRef")) and not loop.foreign(server, MANAGER)

    def _claimable(self, server, claim):
        spec, status = server.get("spec") or {}, server.get("status") or {}
        ref = spec.get("serverClaimRef")
        meta = claim["metadata"]
        if ref and (ref.get("name"), ref.get("namespace")) != (meta["name"], meta["namespace"]):
            return False
        return (status.get("state") == "Available" and not spec.get("unclaimable")
                and status.get("powerState") == "Off" and not spec.get("serverMaintenanceRef")
                and _name(server) not in self.maintained
                and tolerates(spec.get("taints"), (claim.get("spec") or {}).get("tolerations")))

    def _claim_server(self, claim):
        meta, spec = claim["metadata"], claim.get("spec") or {}
        for server in self.servers.values():
            ref = (server.get("spec") or {}).get("serverClaimRef") or {}
            if (ref.get("name"), ref.get("namespace")) == (meta["name"], meta["namespace"]):
                return server
        selector = spec.get("serverSelector")
        for name in sorted(self.servers):
            server = self.servers[name]
            if not self._ours(server):
                continue
            labels = server["metadata"].get("labels") or {}
            if spec.get("serverRef") and name != spec["serverRef"].get("name"):
                continue
            if selector is not None and not selector_matches(selector, labels):
                continue
            if self._claimable(server, claim):
                ref = {"namespace": meta["namespace"], "name": meta["name"]}
                updated = self._write("servers", server, {"spec": {"serverClaimRef": ref}}, cache=self.servers)
                if updated:
                    self.log("Server %s: claimed by %s/%s" % (name, meta["namespace"], meta["name"]))
                return updated  # None: lost a race, the next pass tries again
        return None

    def reconcile_claim(self, claim):
        meta, spec = claim["metadata"], claim.get("spec") or {}
        key = (meta["namespace"], meta["name"])
        if meta.get("deletionTimestamp"):
            if CLAIM_FINALIZER in _finalizers(claim):
                sbc = self.sbcs.get(key)
                if sbc:
                    self.kube.delete(object_path(GV, "serverbootconfigurations", sbc))
                self._set_finalizers("serverclaims", claim, [f for f in _finalizers(claim) if f != CLAIM_FINALIZER])
            return
        if spec.get("serverRef"):
            target = self.servers.get(spec["serverRef"].get("name"))
            if target is not None and not self._ours(target):
                return  # a Server this stand-in does not run
        if _ignored(claim) or loop.foreign(claim, MANAGER):
            return
        if not (claim.get("status") or {}).get("phase"):
            self._write("serverclaims", claim, {"status": {"phase": "Unbound"}}, status=True)
            return
        if CLAIM_FINALIZER not in _finalizers(claim):
            self._set_finalizers("serverclaims", claim, _finalizers(claim) + [CLAIM_FINALIZER])
            return
        server = self._claim_server(claim)
        if server is None:
            return
        if not spec.get("serverRef"):
            self._write("serverclaims", claim, {"spec": {"serverRef": {"name": _name(server)}}})
            return
        if spec["serverRef"].get("name") != _name(server):
            return  # server reference is immutable
        if (server.get("status") or {}).get("state") != "Reserved":
            return
        # applyBootConfiguration: <claim> in the claim's namespace, owned by the claim.
        body_spec = {"serverRef": {"name": _name(server)}, "image": spec.get("image")}
        if spec.get("ignitionSecretRef"):
            body_spec["ignitionSecretRef"] = spec["ignitionSecretRef"]
        sbc = self._ensure_boot_configuration("ServerClaim", meta, body_spec)
        if sbc is None:
            return
        if self._spec(server, {"bootConfigurationRef": {"namespace": meta["namespace"], "name": meta["name"]}}):
            return
        if (claim.get("status") or {}).get("phase") != "Bound":
            if self._write("serverclaims", claim, {"status": {"phase": "Bound"}}, status=True):
                self.log("ServerClaim %s/%s: Bound to %s" % (meta["namespace"], meta["name"], _name(server)))
            return
        # ensurePowerStateForServer
        if (server.get("spec") or {}).get("power") != spec.get("power"):
            self._spec(server, {"power": spec.get("power")})

    # ServerBootConfiguration: metal-operator sets Pending, the boot-operator Ready -------

    def reconcile_boot_configuration(self, sbc):
        if sbc["metadata"].get("deletionTimestamp") or _ignored(sbc) or loop.foreign(sbc, MANAGER):
            return
        server = self.servers.get(((sbc.get("spec") or {}).get("serverRef") or {}).get("name"))
        if server is None or not self._ours(server):
            return
        state = (sbc.get("status") or {}).get("state")
        if not state:
            self.kube.patch(object_path(GV, "serverbootconfigurations", sbc), sbc, {"status": {"state": "Pending"}},
                            "status")
        elif state == "Pending":
            self.kube.patch(object_path(GV, "serverbootconfigurations", sbc), sbc, {"status": {"state": "Ready"}},
                            "status")


def main():
    clusters = [c for c in config.clusters() if config.IRONCORE_GROUP in c.groups]
    if not clusters:
        raise SystemExit("inventories/lab has no host in group %s" % config.IRONCORE_GROUP)
    MetalOperator(clusters[0]).run()
