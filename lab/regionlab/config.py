"""Where the lab keeps things and which clusters it runs.

The cluster list comes from inventories/lab/hosts.yml: every inventory host
that is a Kubernetes cluster gets an API server, and its kubeconfig file is
named after the host, so the playbooks find it without any mapping.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "inventories" / "lab"
STATE = Path(os.environ.get("COBALTCORE_LAB_DIR", REPO / ".lab"))
BIN = Path(os.environ.get("COBALTCORE_LAB_BIN", REPO / ".cache" / "lab-bin"))
CRDS = REPO / "lab" / "crds"
# Sources of the chart repository (real.json, the lab-made charts).
CHARTS = REPO / "lab" / "charts"
GO_MODULES = REPO / "lab" / "go"

KUBERNETES_VERSION = "v1.37.2"
# Below the kernel's ephemeral range (32768-60999): a port in it can be taken by any outgoing
# connection (an API server's to etcd, say) just before the lab binds it.
PORT_BASE = int(os.environ.get("COBALTCORE_LAB_PORT_BASE") or "26400")  # unset or empty: the default, as the inventory reads it

# Where the hand-written CRDs (lab/crds/<file>.yaml) go at lab start, by inventory group or host:
# only what exists before phase 3 (Gardener's kinds). The operators' CRDs, hand-written or
# upstream, arrive with their charts in phase 3 (lab/charts), as in a real region.
LOCAL_CRD_CLUSTERS = {
    "core.gardener.cloud": ["gardener"],
    # The tenants' OpenStackCluster claims on the management cluster: Crossplane makes that CRD from
    # the XRD, and no Crossplane pod runs here (its chart is installed in phase 3, nothing more).
    "c5c3.io": ["management"],
}


# The lab inventory's BMC credentials (inventories/lab/host_vars/baremetal/credentials.yml): the lab
# sets their passwords, as a rack's BMCs come with theirs, so the inventory's password lookup only
# reads them (and a check-mode run writes nothing on the controller).
BMC_CREDENTIALS = ("lab-rack-1",)
BMC_PASSWORD_LENGTH = 24


def bmc_password_file(name):
    return STATE / "secrets" / ("bmc-%s" % name)


# The passphrase of the region's key backups (inventory cobaltcore_key_backup), made once like the BMC passwords.
KEY_BACKUP_PASSPHRASE = STATE / "secrets" / "key-backup-passphrase"
KEY_BACKUP_PASSPHRASE_LENGTH = 32


@dataclass
class Cluster:
    name: str
    index: int
    groups: list = field(default_factory=list)

    @property
    def port(self):
        return PORT_BASE + 10 + self.index

    @property
    def server(self):
        return "https://127.0.0.1:%d" % self.port

    @property
    def kubeconfig(self):
        """The kubeconfig the playbooks use (inventory host name = file name)."""
        return STATE / "kubeconfig" / ("%s.yaml" % self.name)

    @property
    def direct_kubeconfig(self):
        """Straight to the API server, for the lab's own processes (the garden's public one goes via the front)."""
        return self.pki / "admin.kubeconfig"

    @property
    def public_server(self):
        """Where clients reach this cluster: the Gardener front for the garden, else the API server."""
        if GARDEN_GROUP in self.groups:
            return "https://127.0.0.1:%d" % GARDEN_FRONT_PORT
        return self.server

    @property
    def pki(self):
        return STATE / "pki" / self.name

    @property
    def runs_workloads(self):
        """Pods run here (kubelets.py): a cluster of the groups the region's charts go to."""
        return bool(set(WORKLOAD_GROUPS) & set(self.groups))


def _group_nodes(name, node, out):
    """Every group's definitions by name: a child given as `{}` names a group defined elsewhere."""
    out.setdefault(name, []).append(node or {})
    for child, sub in ((node or {}).get("children") or {}).items():
        _group_nodes(child, sub, out)
    return out


def _hosts_of(name, groups, seen=()):
    """Hosts of an inventory group and of its children, in file order."""
    hosts = []
    for node in groups.get(name, []):
        for host in list(node.get("hosts") or {}) + [h for child in node.get("children") or {}
                                                       if child not in seen
                                                       for h in _hosts_of(child, groups, seen + (name,))]:
            if host not in hosts:
                hosts.append(host)
    return hosts


def clusters():
    """The lab's clusters, in inventory order, with their groups."""
    data = yaml.safe_load((INVENTORY / "hosts.yml").read_text())
    groups = _group_nodes("all", data["all"], {})
    membership = {host: [] for host in _hosts_of("all", groups)}
    for name in groups:
        for host in _hosts_of(name, groups) if name != "all" else []:
            membership[host].append(name)
    return [Cluster(name, i, sorted(names)) for i, (name, names) in enumerate(membership.items())]


def cluster(name):
    """The lab's cluster of that inventory host; KeyError naming it when the lab has none."""
    found = next((c for c in clusters() if c.name == name), None)
    if found is None:
        raise KeyError("the lab has no cluster %r" % name)
    return found


ETCD_CLIENT_PORT = PORT_BASE
ETCD_PEER_PORT = PORT_BASE + 1
KEYSTONE_PORT = PORT_BASE + 2
KORC_HEALTH_PORT = PORT_BASE + 3
ETCD_METRICS_PORT = PORT_BASE + 4
# The Gardener front (shoots/adminkubeconfig); the garden's kubeconfig points here.
GARDEN_FRONT_PORT = PORT_BASE + 5
# gardener-apiserver's Shoot update strategy as a mutating webhook (standins/shoot_admission.py).
GARDEN_ADMISSION_PORT = PORT_BASE + 8
# The lab's Helm chart repository (charts.py): http://127.0.0.1:<port>/index.yaml, for Flux's
# HelmRepositories in phase 3 (real upstream charts from pinned Go modules, lab-made where none).
CHARTS_PORT = PORT_BASE + 6
# The memcached of the region's Keystone (memcached.py).
KEYSTONE_CACHE_PORT = PORT_BASE + 7
# The Flux controllers of a cluster that has Flux (flux.py): FLUX_PORTS loopback ports per
# cluster, from base+20 + FLUX_PORTS*index; base+20 .. base+99 leaves room for 16 clusters.
FLUX_PORTS = 5


def flux_port(cluster, k):
    """The k-th (0 .. FLUX_PORTS-1) Flux port of a cluster."""
    if not 0 <= k < FLUX_PORTS or cluster.index >= 16:
        raise ValueError("no Flux port %d for cluster %s (index %d)" % (k, cluster.name, cluster.index))
    return PORT_BASE + 20 + FLUX_PORTS * cluster.index + k


# metal-operator (metal.py): its registry (probe reports), health probe and (unused, webhooks off) webhook port.
METAL_REGISTRY_PORT = PORT_BASE + 300
METAL_HEALTH_PORT = PORT_BASE + 301
METAL_WEBHOOK_PORT = PORT_BASE + 302


# The Keystones of Keystone CRs (keystone-operator stand-in): one loopback port each, taken from
# this range (base+100 .. base+199) and kept while the CR exists (STATE/keystones/ports.json).
KEYSTONE_CR_PORTS = range(PORT_BASE + 100, PORT_BASE + 200)
# Each one's memcached: its port + KEYSTONE_CR_CACHE_OFFSET (base+200 .. base+299).
KEYSTONE_CR_CACHE_OFFSET = 100
# Their data: STATE/keystones/<namespace>/<name>/ (keystone.conf, SQLite database, keys).
KEYSTONES = STATE / "keystones"

# The inventory groups whose clusters run the region's charts (infra_operators' table), and so pods.
WORKLOAD_GROUPS = ("management", "control_plane", "hypervisor_pools", "storage_pools")
# The inventory group whose host is the garden, the one whose host runs metal-operator, and the
# one whose host runs the OpenStack control planes (c5c3-operator, keystone-operator, K-ORC).
GARDEN_GROUP = "gardener"
IRONCORE_GROUP = "ironcore"
CONTROL_PLANE_GROUP = "control_plane"
# Objects the garden's administrator put there before the region (lab/seed/<group or host>.yaml).
SEEDS = REPO / "lab" / "seed"
# The lab's machines: their BMCs (Redfish mocks, metal.py) and what their probe agent reports.
MACHINES = REPO / "lab" / "machines.yaml"
# Delays and injected failures of the operator stand-ins (optional, re-read when it changes).
STANDINS = STATE / "standins.yaml"
