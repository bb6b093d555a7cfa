"""ovn-operator stand-in, in the c5c3-operator stand-in's process: OVNCluster status and OVNChassis.

Seed 003 "OVN Operator" is the spec (the lab CRDs lab/crds/ovn.c5c3.io.yaml follow it); upstream's
ovn-operator (github.com/c5c3/cobaltcore operators/ovn) has other kinds (OVNCentral, one OVNChassis
per class of node), so only facts are taken from it: a database's Raft state as `readyReplicas`,
odd member counts, bridge names of at most 15 characters. docs/network.md has the decisions.

- The c5c3-operator part (cluster_spec): the OVNCluster ovn-system/ovn of the seed, created once a
  ControlPlane enables Neutron (c5c3.py).
- OVNCluster status, as field manager lab-ovn-operator: observedGeneration; conditions
  NorthboundReady / SouthboundReady (every Raft member joined; reasons RaftClusterReady,
  RaftClusterForming, RaftMemberMissing), ControllersReady (every chassis connected), Ready (all
  three), each with observedGeneration; endpoints {northbound, southbound} as the seed shows them,
  published once each database has a Raft majority; chassisCount, activeControllers; and, a lab
  decision, northbound/southbound {replicas, readyReplicas, members}.
- OVNChassis: one per Node that the OVNCluster's spec.controller.nodeSelector selects, in every
  hypervisor-pool lab cluster; named after the Node, labelled ovn.c5c3.io/pool and ovn.c5c3.io/node
  (no ownerReference: the Node is in another cluster); deleted when its Node is gone or no longer
  selected. spec: hostname, systemId (stable per pool and Node), bridgeMappings and the encapsulation
  type from what the pool's ovn-agents chart renders (ConfigMap ovn-system/ovn-controller-config:
  the external_ids ovn-controller reads), encapsulation ip = the Node's InternalIP. status:
  OVSConnected (False when that ConfigMap is missing, has no ovn-remote or ovn-bridge-mappings, or
  points elsewhere than the OVNCluster's Southbound endpoint), Ready (OVSConnected and the Node
  Ready), registeredAt once, lastHeartbeat only when a condition changes (no write per pass).

Delay `ovn` (standins.yaml, seconds from the first sight of a generation): the Raft clusters form.
Failures (standins.yaml `failures`, key OVNCluster, OVNCluster/<namespace> or
OVNCluster/<namespace>/<name>): {missing_members: [ovn-sb-2], reason, message}: those members are no
Raft members, their database's condition is False naming them, Ready is False.
"""

import copy
import uuid

from .. import config
from . import loop
from .client import Kube, Waker, object_path, path
from .settings import LAB_NAMESPACE

GV = "ovn.c5c3.io/v1alpha1"
API = "/apis/" + GV
NAMESPACE, NAME = "ovn-system", "ovn"
MANAGER = "lab-ovn-operator"
HYPERVISOR_LABEL = "node-role.kubernetes.io/hypervisor"
POOL_LABEL, NODE_LABEL = "ovn.c5c3.io/pool", "ovn.c5c3.io/node"
AGENTS_CONFIG = "ovn-controller-config"
HYPERVISOR_GROUP = "hypervisor_pools"


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

    def _connect(self):
        if self.kube is None:
            self.kube = Kube(self.cluster, MANAGER)
            pools = [c for c in config.clusters() if HYPERVISOR_GROUP in c.groups]
            self.pools = [(c.name, Kube(c, MANAGER)) for c in pools]
            Waker(self.cluster, [path(GV, "ovnchassis", NAMESPACE)], self.ctl.wake, loop.log)
            for pool in pools:
                Waker(pool, ["/api/v1/nodes", path("v1", "configmaps", NAMESPACE)], self.ctl.wake, loop.log)

    def reconcile(self, ovn_cluster):
        """ovn_cluster: the live OVNCluster ovn-system/ovn, or None (not served, not created)."""
        if ovn_cluster is None or ovn_cluster["metadata"].get("deletionTimestamp") or \
                loop.foreign(ovn_cluster, MANAGER):
            return
        self._connect()
        chassis = self.reconcile_chassis(ovn_cluster)
        self.reconcile_cluster(ovn_cluster, chassis)

    # OVNChassis --------------------------------------------------------------------------

    def reconcile_chassis(self, cluster):
        spec = cluster.get("spec") or {}
        selector = (spec.get("controller") or {}).get("nodeSelector") or {HYPERVISOR_LABEL: ""}
        southbound = ((cluster.get("status") or {}).get("endpoints") or {}).get("southbound")
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
                self.chassis(pool, node, ip, config_map, southbound, live.get(name))
        for name, obj in live.items():
            labels = obj["metadata"].get("labels") or {}
            if POOL_LABEL in labels and name not in wanted:
                self.kube.delete(object_path(GV, "ovnchassis", obj))
                self.ctl.log("OVNChassis %s: Node %s of %s is gone or not selected; deleted"
                             % (name, labels.get(NODE_LABEL), labels[POOL_LABEL]))
        return [o for n, o in self.live_chassis().items() if n in wanted]

    def live_chassis(self):
        return {o["metadata"]["name"]: o for o in self.kube.list(path(GV, "ovnchassis", NAMESPACE))}

    def chassis(self, pool, node, ip, config_map, southbound, live):
        name = node["metadata"]["name"]
        data = (config_map or {}).get("data") or {}
        mappings = parse_mappings(data.get("ovn-bridge-mappings"))
        desired = {
            "apiVersion": GV, "kind": "OVNChassis",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {POOL_LABEL: pool, NODE_LABEL: name}},
            "spec": {"hostname": name, "systemId": str(uuid.uuid5(LAB_NAMESPACE, "ovn/%s/%s" % (pool, name))),
                     "bridgeMappings": mappings or [],
                     "encapsulation": {"type": data.get("ovn-encap-type") or "geneve", "ip": ip}},
        }
        if live is None or (live.get("spec") or {}) != desired["spec"] or any(
                (live["metadata"].get("labels") or {}).get(k) != v for k, v in desired["metadata"]["labels"].items()):
            live = self.kube.apply(path(GV, "ovnchassis", NAMESPACE, name), desired)
            self.ctl.log("OVNChassis %s: registered for Node %s of %s (%s)" % (name, name, pool, ip))
        where = "ConfigMap %s/%s in cluster %s" % (NAMESPACE, AGENTS_CONFIG, pool)
        if config_map is None:
            connected = ("False", "ConfigMissing", "ovn-controller on %s has no configuration: %s is missing"
                         % (name, where))
        elif not data.get("ovn-remote"):
            connected = ("False", "NoRemote", "ovn-controller on %s has no ovn-remote (%s)" % (name, where))
        elif "ovn-bridge-mappings" not in data or mappings is None:
            connected = ("False", "BadBridgeMappings", "ovn-controller on %s has %s ovn-bridge-mappings (%s)" % (
                name, "no" if "ovn-bridge-mappings" not in data else "malformed", where))
        elif data["ovn-remote"] != southbound:
            connected = ("False", "ConnectionFailed", "ovn-controller on %s connects to %s; the Southbound database "
                         "is at %s" % (name, data["ovn-remote"], southbound or "no endpoint yet"))
        else:
            connected = ("True", "Connected", "ovn-controller on %s is connected to %s" % (name, southbound))
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
        formed = self.ctl.after((meta["uid"], gen, "raft"), self.ctl.delay("ovn"))
        failure = self.ctl.settings.get().failure("OVNCluster", meta["namespace"], meta["name"])
        missing = set(failure.get("missing_members") or [])
        status = cluster.get("status") or {}
        conditions = copy.deepcopy(status.get("conditions") or [])
        wanted = {"observedGeneration": gen, "conditions": conditions}
        endpoints, unready = {}, []
        for key, ctype, conn, default, port in (("northbound", "NorthboundReady", "nbConnection", "ovn-nb", 6641),
                                                ("southbound", "SouthboundReady", "sbConnection", "ovn-sb", 6642)):
            service, port = endpoint(spec, conn, default, port)
            replicas = (spec.get(key) or {}).get("replicas") or 3
            names = ["%s-%d" % (service, i) for i in range(replicas)]
            members = [n for n in names if n not in missing] if formed else []
            if not formed:
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
