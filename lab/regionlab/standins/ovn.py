"""ovn-operator stand-in, in the c5c3-operator stand-in's process: OVNCluster status and OVNChassis, over real OVN.

Seed 003 "OVN Operator" is the spec (the lab CRDs lab/crds/ovn.c5c3.io.yaml follow it); upstream's
ovn-operator (github.com/c5c3/cobaltcore operators/ovn) has other kinds (OVNCentral, one OVNChassis
per class of node), so only facts are taken from it: a database's Raft state as `readyReplicas`,
odd member counts, bridge names of at most 15 characters. docs/network.md has the decisions.

The databases, northd and every chassis are real (lab/regionlab/ovn.py, Debian's OVN 23.03 and Open vSwitch
3.1): this stand-in starts them as the operator's StatefulSets and the ovn-agents DaemonSets would run them, and
reports what they say.

- The c5c3-operator part (cluster_spec): the OVNCluster ovn-system/ovn of the seed, created once a
  ControlPlane enables Neutron (c5c3.py).
- The OVNCluster's databases: NB and SB as 3-member Raft clusters (members ovn-nb-0..2, ovn-sb-0..2) and
  ovn-northd, started at the first pass that sees the OVNCluster (again after a lab restart).
- OVNCluster status, as field manager lab-ovn-operator: observedGeneration; conditions
  NorthboundReady / SouthboundReady (the members `cluster/status` reports as Raft members with a leader;
  reasons RaftClusterReady, RaftClusterForming, RaftMemberMissing), ControllersReady (every chassis
  registered), Ready (all three), each with observedGeneration; endpoints {northbound, southbound} as the
  seed shows them (names only the control plane resolves), published once each database has a Raft
  majority; chassisCount, activeControllers; and, a lab decision, northbound/southbound {replicas,
  readyReplicas, members}.
- A LoadBalancer Service of ovn-system selecting the Southbound members (app=ovn-sb) with a
  spec.loadBalancerIP: the lab's load balancer relays that address to the live members and writes
  status.loadBalancer.ingress, as MetalLB or a cloud's load balancer would. It is the only way the
  hypervisor pools' chassis reach the Southbound database.
- OVNChassis: one per Node that the OVNCluster's spec.controller.nodeSelector selects, in every
  hypervisor-pool lab cluster; named after the Node, labelled ovn.c5c3.io/pool and ovn.c5c3.io/node
  (no ownerReference: the Node is in another cluster); deleted, and its processes stopped, when its Node
  is gone or no longer selected. spec: hostname, systemId (stable per pool and Node), bridgeMappings
  and the encapsulation type from what the pool's ovn-agents chart renders (ConfigMap
  ovn-system/ovn-controller-config: the external_ids ovn-controller reads), encapsulation ip = the
  Node's InternalIP. The Node's chassis (ovsdb-server, ovs-vswitchd, ovn-controller) runs with those
  external_ids and the ConfigMap's ovn-remote. status: OVSConnected (False when that ConfigMap is
  missing, has no ovn-remote or ovn-bridge-mappings, or the chassis is not in the Southbound database
  with the Node's address: an ovn-remote that does not lead there never registers), Ready (OVSConnected
  and the Node Ready), registeredAt once, lastHeartbeat only when a condition changes.

The databases are read at most every second. Failures (standins.yaml `failures`, key OVNCluster,
OVNCluster/<namespace> or OVNCluster/<namespace>/<name>): {missing_members: [ovn-sb-2]}: those members'
processes are stopped (started again once the failure is gone); the database's condition names them.
"""

import copy
import ipaddress
import time
import uuid

from .. import config
from .. import ovn as data_plane
from . import loop
from .client import Kube, Waker, object_path, path
from .settings import LAB_NAMESPACE

GV = "ovn.c5c3.io/v1alpha1"
API = "/apis/" + GV
NAMESPACE, NAME = "ovn-system", "ovn"
MANAGER = "lab-ovn-operator"
OPERATOR = "ovn-operator"   # its Deployment (deployments.py)
HYPERVISOR_LABEL = "node-role.kubernetes.io/hypervisor"
POOL_LABEL, NODE_LABEL = "ovn.c5c3.io/pool", "ovn.c5c3.io/node"
AGENTS_CONFIG = "ovn-controller-config"
HYPERVISOR_GROUP = "hypervisor_pools"
SERVICES = path("v1", "services", NAMESPACE)
# The Southbound members' pods carry this label (seed 003's Service ovn-sb selects them): a LoadBalancer Service
# selecting it in ovn-system reaches the Southbound database.
SOUTHBOUND_SELECTOR = {"app": "ovn-sb"}
# How often the real databases are read for status (Raft members, chassis): at most every this many seconds.
READ_EVERY = 1.0


def cluster_spec():
    """The OVNCluster the c5c3-operator creates (seed 003)."""
    selector = {HYPERVISOR_LABEL: ""}
    database = {"replicas": 3, "storage": {"size": "10Gi"}}
    return {
        "ovnImage": {"repository": "ghcr.io/c5c3/ovn", "tag": "24.03.4"},
        "ovsImage": {"repository": "ghcr.io/c5c3/ovs", "tag": "3.4.1"},
        "northbound": copy.deepcopy(database), "southbound": copy.deepcopy(database),
        "controller": {"nodeSelector": dict(selector)}, "ovs": {"nodeSelector": dict(selector)},
        "neutronIntegration": {"nbConnection": {"service": {"name": "ovn-nb", "port": 6641}},
                               "sbConnection": {"service": {"name": "ovn-sb", "port": 6642}}},
        "tls": {"enabled": True, "certSecretRef": {"name": "ovn-tls-certs"}},
    }


def endpoint(spec, key, default_name, default_port):
    service = ((spec.get("neutronIntegration") or {}).get(key) or {}).get("service") or {}
    return (service.get("name") or default_name, service.get("port") or default_port)


def _selected(node, selector):
    """A nodeSelector's labels, as a label selector `key=value` (`key` for an empty value) selects."""
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(key) == value if value else key in labels for key, value in selector.items())


def _internal_ip(node):
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return address.get("address")
    return None


def _node_ready(node):
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _condition(obj, ctype):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == ctype), {})


def system_id(pool, node):
    """A Node's chassis name in the Southbound database: stable per pool and Node."""
    return str(uuid.uuid5(LAB_NAMESPACE, "ovn/%s/%s" % (pool, node)))


def parse_mappings(text):
    result = []
    for part in [p.strip() for p in (text or "").split(",") if p.strip()]:
        physnet, sep, bridge = part.partition(":")
        if not sep or not physnet or not bridge:
            return None
        result.append({"physicalNetwork": physnet, "bridge": bridge})
    return sorted(result, key=lambda m: m["physicalNetwork"])


class OVNOperator:
    """Driven by the c5c3-operator's loop; its clients to the pools' clusters are made on first use."""

    def __init__(self, controller, cluster):
        self.ctl = controller
        self.cluster = cluster
        self.kube = None
        self.pools = []
        # The real OVN (lab/regionlab/ovn.py): the tests of this stand-in give it doubles.
        self.central, self.chassis_of = data_plane.Central(), data_plane.Chassis
        self.read_every = READ_EVERY
        self.chassis_started, self.chassis_checked = set(), {}
        self.relays = {}
        self.read_at, self.raft, self.registered = 0.0, {}, {}

    def _connect(self):
        if self.kube is None:
            self.kube = Kube(self.cluster, MANAGER)
            pools = [c for c in config.clusters() if HYPERVISOR_GROUP in c.groups]
            self.pools = [(c.name, Kube(c, MANAGER)) for c in pools]
            Waker(self.cluster, [path(GV, "ovnchassis", NAMESPACE), SERVICES], self.ctl.wake, loop.log)
            for pool in pools:
                Waker(pool, ["/api/v1/nodes", path("v1", "configmaps", NAMESPACE)], self.ctl.wake, loop.log)

    def reconcile(self, ovn_cluster):
        """ovn_cluster: the live OVNCluster ovn-system/ovn, or None (not served, not created)."""
        if ovn_cluster is None or ovn_cluster["metadata"].get("deletionTimestamp") or \
                loop.foreign(ovn_cluster, MANAGER):
            return
        self._connect()
        meta = ovn_cluster["metadata"]
        failure = self.ctl.settings.get().failure("OVNCluster", meta["namespace"], meta["name"])
        self.central.start(skip=set(failure.get("missing_members") or []))
        self.read_databases()
        self.reconcile_load_balancers()
        chassis = self.reconcile_chassis(ovn_cluster)
        self.reconcile_cluster(ovn_cluster, chassis)

    def read_databases(self):
        """The Raft members of both databases and the Southbound's chassis, read at most every READ_EVERY seconds
        (each pass plans a wake-up so that a change shows within that)."""
        left = self.read_at + self.read_every - time.monotonic()
        if left > 0:
            self.ctl.next_due = min(self.ctl.next_due, left)
            return
        self.read_at = time.monotonic()
        self.raft = {db: self.central.members(db) for db in data_plane.DATABASES}
        try:
            self.registered = self.central.chassis() if self.raft["sb"] else {}
        except RuntimeError as exc:  # no Southbound member answers
            self.ctl.log("OVN Southbound unreadable: %s" % exc)
            self.registered = {}
        self.ctl.next_due = min(self.ctl.next_due, 5.0)

    # LoadBalancer Services ------------------------------------------------------------------

    def reconcile_load_balancers(self):
        """A LoadBalancer Service of ovn-system that selects the Southbound members: the lab's load balancer (as
        MetalLB or a cloud's would) takes its spec.loadBalancerIP, relays its ports to the live members and writes
        status.loadBalancer.ingress. A Service without an address stays pending (the lab has no address pool)."""
        wanted = {}
        for service in self.kube.list(SERVICES):
            spec = service.get("spec") or {}
            address = spec.get("loadBalancerIP")
            if spec.get("type") != "LoadBalancer" or spec.get("selector") != SOUTHBOUND_SELECTOR or not address:
                continue
            for port in spec.get("ports") or []:
                wanted[(address, port["port"])] = service
        for key in [k for k in self.relays if k not in wanted]:
            self.relays.pop(key).close()
            self.ctl.log("load balancer %s:%d: released" % key)
        for (address, port), service in wanted.items():
            if (address, port) not in self.relays:
                try:
                    ipaddress.ip_address(address)
                    self.relays[(address, port)] = data_plane.Relay(address, port, [
                        (a, data_plane.CLIENT_PORTS["sb"]) for a in data_plane.MEMBER_ADDRESSES])
                except (OSError, ValueError) as exc:
                    self.ctl.log("load balancer %s:%s for Service %s: %s" % (
                        address, port, service["metadata"]["name"], exc))
                    continue
                self.ctl.log("load balancer %s:%d: relays to the OVN Southbound members" % (address, port))
            ingress = [{"ip": address, "ipMode": "VIP"}]
            if ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") != ingress:
                self.kube.patch(path("v1", "services", NAMESPACE, service["metadata"]["name"]), service,
                                {"status": {"loadBalancer": {"ingress": ingress}}}, "status")

    # OVNChassis --------------------------------------------------------------------------

    def reconcile_chassis(self, cluster):
        spec = cluster.get("spec") or {}
        selector = (spec.get("controller") or {}).get("nodeSelector") or {HYPERVISOR_LABEL: ""}
        live = {o["metadata"]["name"]: o for o in self.kube.list(path(GV, "ovnchassis", NAMESPACE))}
        wanted = {}
        for pool, kube in self.pools:
            config_map = kube.get(path("v1", "configmaps", NAMESPACE, AGENTS_CONFIG))
            # The watched list, selected here as the API server would (`key=value`, or `key` for an empty value).
            for node in (n for n in kube.list("/api/v1/nodes") if _selected(n, selector)):
                name, ip = node["metadata"]["name"], _internal_ip(node)
                if name in wanted:
                    self.ctl.log("OVNChassis %s: Node %s of %s has the name of one in %s; skipped"
                                 % (name, name, pool, wanted[name][0]))
                    continue
                if not ip:  # ovn-controller has no encapsulation address without one
                    continue
                wanted[name] = (pool, node)
                self.chassis(pool, node, ip, config_map, live.get(name))
        for name, obj in live.items():
            labels = obj["metadata"].get("labels") or {}
            if POOL_LABEL in labels and name not in wanted:
                self.stop_chassis(labels[POOL_LABEL], name)
                self.kube.delete(object_path(GV, "ovnchassis", obj))
                self.ctl.log("OVNChassis %s: Node %s of %s is gone or not selected; deleted"
                             % (name, labels.get(NODE_LABEL), labels[POOL_LABEL]))
        self.forget_stale_chassis(wanted)
        return [o for n, o in self.live_chassis().items() if n in wanted]

    def run_chassis(self, pool, name, spec, data):
        """The Node's chassis processes (started at first sight, again after a lab restart) and the external_ids
        ovn-controller reads, as the ovn-agents chart's DaemonSets set them; whether its ovn-controller is connected
        to the Southbound database now."""
        chassis = self.chassis_of(pool, name)
        if (pool, name) not in self.chassis_started:
            chassis.start()
            self.chassis_started.add((pool, name))
        wanted = {"system-id": spec["systemId"], "hostname": name, "ovn-remote": data.get("ovn-remote"),
                  "ovn-encap-type": spec["encapsulation"]["type"], "ovn-encap-ip": spec["encapsulation"]["ip"],
                  "ovn-bridge-mappings": data.get("ovn-bridge-mappings")}
        # Asked again when the settings change or every read_every seconds, not on every pass.
        known = self.chassis_checked.get((pool, name))
        if known and known[0] == wanted and time.monotonic() - known[2] < self.read_every:
            return known[1]
        if chassis.configure(wanted):
            self.read_at = 0.0  # read the Southbound again soon: the chassis registers within a second
            self.ctl.next_due = min(self.ctl.next_due, self.read_every or 0.1)
        connected = chassis.connected()
        self.chassis_checked[(pool, name)] = (wanted, connected, time.monotonic())
        return connected

    def forget_stale_chassis(self, wanted):
        """Chassis rows of the Southbound database that no selected Node owns (a Node gone, a pool's Nodes made anew):
        deleted, as the operator deletes a chassis with its OVNChassis. A stale row keeps its encapsulation address,
        which another Node may have now, and the Southbound refuses a second chassis with it."""
        owned = {system_id(pool, name) for name, (pool, dummy) in wanted.items()}
        for name in [n for n in self.registered if n not in owned]:
            try:
                self.central.delete_chassis(name)
            except RuntimeError as exc:
                self.ctl.log("OVN chassis %s: not deleted from the Southbound database: %s" % (name, exc))
                continue
            self.registered.pop(name, None)
            self.ctl.log("OVN chassis %s: deleted from the Southbound database (no Node owns it)" % name)

    def stop_chassis(self, pool, name):
        self.chassis_of(pool, name).destroy()
        self.chassis_started.discard((pool, name))
        self.chassis_checked.pop((pool, name), None)

    def live_chassis(self):
        return {o["metadata"]["name"]: o for o in self.kube.list(path(GV, "ovnchassis", NAMESPACE))}

    def chassis(self, pool, node, ip, config_map, live):
        name = node["metadata"]["name"]
        data = (config_map or {}).get("data") or {}
        mappings = parse_mappings(data.get("ovn-bridge-mappings"))
        desired = {
            "apiVersion": GV, "kind": "OVNChassis",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {POOL_LABEL: pool, NODE_LABEL: name}},
            "spec": {"hostname": name, "systemId": system_id(pool, name),
                     "bridgeMappings": mappings or [],
                     "encapsulation": {"type": data.get("ovn-encap-type") or "geneve", "ip": ip}},
        }
        if live is None or (live.get("spec") or {}) != desired["spec"] or any(
                (live["metadata"].get("labels") or {}).get(k) != v for k, v in desired["metadata"]["labels"].items()):
            live = self.kube.apply(path(GV, "ovnchassis", NAMESPACE, name), desired)
            self.ctl.log("OVNChassis %s: registered for Node %s of %s (%s)" % (name, name, pool, ip))
        where = "ConfigMap %s/%s in cluster %s" % (NAMESPACE, AGENTS_CONFIG, pool)
        connected_now = False
        if config_map is not None:
            # The ovn-agents DaemonSets' pods on this Node: Open vSwitch and ovn-controller with the chart's settings.
            connected_now = self.run_chassis(pool, name, desired["spec"], data)
        registered = self.registered.get(desired["spec"]["systemId"])
        if config_map is None:
            connected = ("False", "ConfigMissing", "ovn-controller on %s has no configuration: %s is missing"
                         % (name, where))
        elif not data.get("ovn-remote"):
            connected = ("False", "NoRemote", "ovn-controller on %s has no ovn-remote (%s)" % (name, where))
        elif "ovn-bridge-mappings" not in data or mappings is None:
            connected = ("False", "BadBridgeMappings", "ovn-controller on %s has %s ovn-bridge-mappings (%s)" % (
                name, "no" if "ovn-bridge-mappings" not in data else "malformed", where))
        elif registered is None or not connected_now:
            connected = ("False", "ConnectionFailed", "ovn-controller on %s is not %s the Southbound database; it "
                         "connects to %s" % (name, "registered in" if registered is None else "connected to",
                                             data["ovn-remote"]))
        elif ip not in registered["encaps"]:
            connected = ("False", "EncapMismatch", "ovn-controller on %s is registered with encapsulation address %s, "
                         "not the Node's %s" % (name, ", ".join(registered["encaps"]) or "none", ip))
        else:
            connected = ("True", "Connected", "ovn-controller on %s is registered in the Southbound database through "
                         "%s" % (name, data["ovn-remote"]))
        if connected[0] != "True":
            ready = ("False", "OVSNotConnected", connected[2])
        elif not _node_ready(node):
            ready = ("False", "NodeNotReady", "Node %s of %s is not Ready" % (name, pool))
        else:
            ready = ("True", "ChassisReady", "chassis %s is registered and connected" % name)
        gen = live["metadata"].get("generation")
        status = live.get("status") or {}
        conditions = copy.deepcopy(status.get("conditions") or [])
        changed = loop.set_condition(conditions, "OVSConnected", *connected, observed_generation=gen)
        changed = loop.set_condition(conditions, "Ready", *ready, observed_generation=gen) or changed
        now = loop.now_rfc3339()
        wanted = {"observedGeneration": gen, "conditions": conditions,
                  "registeredAt": status.get("registeredAt") or now,
                  # coarse: moves with a change of the conditions, not on every pass
                  "lastHeartbeat": now if changed or not status.get("lastHeartbeat") else status["lastHeartbeat"]}
        patch = {k: v for k, v in wanted.items() if status.get(k) != v}
        if patch and self.kube.patch(object_path(GV, "ovnchassis", live), live, {"status": patch}, "status"):
            self.ctl.log("OVNChassis %s: OVSConnected %s (%s)" % (name, connected[0], connected[1]))

    # OVNCluster ---------------------------------------------------------------------------

    def reconcile_cluster(self, cluster, chassis):
        meta = cluster["metadata"]
        spec = cluster.get("spec") or {}
        gen = meta.get("generation")
        failure = self.ctl.settings.get().failure("OVNCluster", meta["namespace"], meta["name"])
        status = cluster.get("status") or {}
        conditions = copy.deepcopy(status.get("conditions") or [])
        wanted = {"observedGeneration": gen, "conditions": conditions}
        endpoints, unready = {}, []
        for db, key, ctype, conn, default, port in (
                ("nb", "northbound", "NorthboundReady", "nbConnection", "ovn-nb", 6641),
                ("sb", "southbound", "SouthboundReady", "sbConnection", "ovn-sb", 6642)):
            service, port = endpoint(spec, conn, default, port)
            replicas = len(data_plane.MEMBER_ADDRESSES)
            names = [data_plane.member_name(db, i) for i in range(replicas)]
            members = [n for n in names if n in self.raft.get(db, [])]
            if not members:
                cond = ("False", "RaftClusterForming", "0 of %d Raft members joined" % replicas)
            elif len(members) < replicas:
                absent = [n for n in names if n not in members]
                cond = ("False", failure.get("reason") or "RaftMemberMissing", failure.get("message") or (
                    "%s %s not a Raft member: %d of %d" % (", ".join(absent), "is" if len(absent) == 1 else "are",
                                                           len(members), replicas)))
            else:
                cond = ("True", "RaftClusterReady", "%d of %d Raft members" % (replicas, replicas))
            loop.set_condition(conditions, ctype, *cond, observed_generation=gen)
            if cond[0] != "True":
                unready.append("%s (%s)" % (ctype, cond[2]))
            wanted[key] = {"replicas": replicas, "readyReplicas": len(members), "members": members}
            if len(members) * 2 > replicas:  # a Raft majority serves clients
                endpoints[key] = "tcp:%s.%s.svc.cluster.local:%d" % (service, meta["namespace"], port)
        active = [c for c in chassis if _condition(c, "Ready").get("status") == "True"]
        if len(active) == len(chassis):
            cond = ("True", "ControllersReady", "%d of %d ovn-controllers connected" % (len(active), len(chassis))
                    if chassis else "no hypervisor Node is selected")
        else:
            down = ["%s (%s)" % (c["metadata"]["name"], _condition(c, "Ready").get("message") or "no status yet")
                    for c in chassis if c not in active]
            cond = ("False", "ControllersNotReady", "%d of %d ovn-controllers connected; not connected: %s"
                    % (len(active), len(chassis), "; ".join(down)))
        loop.set_condition(conditions, "ControllersReady", *cond, observed_generation=gen)
        if cond[0] != "True":
            unready.append("ControllersReady (%s)" % cond[2])
        if unready:
            loop.set_condition(conditions, "Ready", "False", "NotAllReady", "not ready: %s" % "; ".join(unready), gen)
        else:
            loop.set_condition(conditions, "Ready", "True", "AllReady", "All sub-conditions are ready", gen)
        order = ["Ready", "NorthboundReady", "SouthboundReady", "ControllersReady"]
        conditions.sort(key=lambda c: order.index(c["type"]) if c["type"] in order else len(order))
        wanted.update(endpoints=endpoints or None, chassisCount=len(chassis), activeControllers=len(active))
        patch = {k: v for k, v in wanted.items() if status.get(k) != v}
        if patch and self.kube.patch(object_path(GV, "ovnclusters", cluster), cluster, {"status": patch}, "status"):
            self.ctl.log("OVNCluster %s/%s: %s" % (meta["namespace"], meta["name"],
                                                  "Ready" if not unready else "; ".join(unready)))
