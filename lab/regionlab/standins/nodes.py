"""The worker Nodes of a reconciled Shoot, as kubelets and Gardener's machine controller register them.

Run from the gardenlet stand-in's loop (no process of its own). A real Shoot of the ironcore-metal
provider gets one Node per machine of its worker pool, each on a claimed bare-metal Server; the
lab registers one Node per bound ServerClaim of the pool (on the IronCore cluster, label
c5c3.io/pool = the Shoot's inventory host), named after the claimed Server (spec.serverRef.name),
up to the worker's `maximum`, its spec.providerID naming the claim as cloud-provider-metal sets it
(metal://<claim namespace>/<claim name>):

- labels: kubelet's (kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch), the machine
  type (node.kubernetes.io/instance-type), Gardener's worker pool labels (worker.gardener.cloud/pool
  and the deprecated worker.garden.sapcloud.io/group), the worker's own `labels`, and the topology
  labels topology.kubernetes.io/zone and /region the cloud-controller-manager sets when it
  initializes the Node: ironcore-dev/cloud-provider-metal's InstanceMetadata takes them from the
  claimed Server's labels of the same keys (none when the Server has none). The worker's `zones` only
  place MachineDeployments (gardener-extension-provider-ironcore-metal: one per zone, its ServerClaims
  select by the machine type, not by zone), so the Server decides the zone;
- status: addresses InternalIP + Hostname, the conditions kubelet's nodestatus setters write
  (MemoryPressure, DiskPressure, PIDPressure False, Ready True "kubelet is posting ready status"),
  nodeInfo, capacity and allocatable. KWOK (regionlab/kubelets.py) then plays their kubelets: it
  renews their Leases and runs the pods scheduled to them.

InternalIP: the first free address of the Shoot's spec.networking.nodes from its 10th host address
upward (the lab's range 10.250.<cluster index>.0/24 without one); an existing Node keeps its
address. A Node is created, then its status patched (a subresource); afterwards it is written only
when a label it should carry is missing or its status lacks its address. (The CCM sets the topology
labels only once; a zone its Server gained later reaches an existing Node here all the same, standing
in for the new Nodes a changed worker pool rolls out.) Nodes whose claim is gone (or that exceed the
maximum) are deleted, as the machine controller drains and deletes them.
"""

import ipaddress

from .client import path
from .loop import now_rfc3339

NODE_MANAGER = "lab-kubelet"
MCM_MANAGER = "lab-machine-controller-manager"
POOL_LABEL = "c5c3.io/pool"        # plugins/module_utils/region/naming.py POOL_LABEL
WORKER_POOL = "worker.gardener.cloud/pool"
WORKER_GROUP = "worker.garden.sapcloud.io/group"   # Gardener still sets the deprecated key
FIRST_HOST = 10
KUBELET_VERSION = "v1.33.0"
METAL_GV = "metal.ironcore.dev/v1alpha1"
NODES = path("v1", "nodes")
CLAIMS = path(METAL_GV, "serverclaims")
SERVERS = path(METAL_GV, "servers")
# The labels cloud-provider-metal copies from the claimed Server to the Node (InstanceMetadata Zone, Region).
TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")

# kubelet pkg/kubelet/nodestatus/setters.go
CONDITIONS = [
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
]
RESOURCES = {"cpu": "64", "memory": "528280960Ki", "pods": "110", "ephemeral-storage": "1920Gi"}


def lab_cidr(cluster_index):
    return "10.250.%d.0/24" % cluster_index


def worker_of(shoot):
    workers = ((shoot.get("spec") or {}).get("provider") or {}).get("workers") or []
    return workers[0] if workers else None


def node_cidr(shoot, cluster_index):
    return ((shoot.get("spec") or {}).get("networking") or {}).get("nodes") or lab_cidr(cluster_index)


def assign_addresses(cidr, names, existing):
    """{node name: address}: existing Nodes keep theirs (when in the CIDR), new ones take the first free
    host address from the 10th upward, in the order of `names`."""
    network = ipaddress.ip_network(cidr, strict=False)
    taken, result = set(), {}
    for name in names:
        address = existing.get(name)
        if address and ipaddress.ip_address(address) in network:
            result[name] = address
            taken.add(address)
    hosts = (str(h) for i, h in enumerate(network.hosts(), 1) if i >= FIRST_HOST)
    for name in names:
        if name in result:
            continue
        for host in hosts:
            if host not in taken:
                result[name] = host
                taken.add(host)
                break
        else:
            raise ValueError("no free address left in %s for Node %s" % (cidr, name))
    return result


def claim_of_server(claims):
    """{Server name: (claim namespace, claim name)} of the bound claims."""
    return dict((((c.get("spec") or {}).get("serverRef") or {}).get("name"),
                 (c["metadata"].get("namespace"), c["metadata"]["name"]))
                for c in claims if (c.get("status") or {}).get("phase") == "Bound")


def provider_id(namespace, claim):
    """cloud-provider-metal's buildProviderID: metal://<ServerClaim namespace>/<ServerClaim name>; its
    InstanceExists and InstanceMetadata find a Node's claim by it."""
    return "metal://%s/%s" % (namespace, claim)


def wanted_servers(claims, pool, maximum, existing):
    """Names of the claimed Servers that get a Node: bound claims of the pool, Nodes that exist first
    (never replaced by a newer claim), then by claim name, at most `maximum`."""
    servers = []
    for claim in claims:
        meta = claim["metadata"]
        if (meta.get("labels") or {}).get(POOL_LABEL) != pool or meta.get("deletionTimestamp"):
            continue
        server = ((claim.get("spec") or {}).get("serverRef") or {}).get("name")
        if server and (claim.get("status") or {}).get("phase") == "Bound":
            servers.append((server not in existing, meta["name"], server))
    return [s for _, _, s in sorted(servers)][:max(0, maximum)]


def node_labels(worker, name, server=None):
    """A Node's labels: kubelet's, Gardener's for the worker pool, and the CCM's from its Server."""
    machine = worker.get("machine") or {}
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": machine.get("architecture") or "amd64",
              WORKER_POOL: worker["name"], WORKER_GROUP: worker["name"]}
    if machine.get("type"):
        labels["node.kubernetes.io/instance-type"] = machine["type"]
    labels.update(worker.get("labels") or {})
    server_labels = ((server or {}).get("metadata") or {}).get("labels") or {}
    labels.update((k, server_labels[k]) for k in TOPOLOGY_LABELS if server_labels.get(k))
    return labels


def kubelet_version(shoot):
    """The kubelet a Shoot's Nodes run: its Kubernetes version (gardener-apiserver stores it with its patch)."""
    version = str((((shoot.get("spec") or {}).get("kubernetes") or {}).get("version")) or "")
    return "v" + version if version.count(".") == 2 else KUBELET_VERSION


def node_status(name, address, worker, now, kubelet=KUBELET_VERSION):
    image = (worker.get("machine") or {}).get("image") or {}
    conditions = [{"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now,
                   "lastTransitionTime": now} for t, s, r, m in CONDITIONS]
    return {
        "addresses": [{"type": "InternalIP", "address": address}, {"type": "Hostname", "address": name}],
        "conditions": conditions,
        "capacity": dict(RESOURCES), "allocatable": dict(RESOURCES),
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        # KWOK (kubelets.py), the Nodes' kubelet from then on, renews the status of Running Nodes only.
        "phase": "Running",
        "nodeInfo": {"architecture": (worker.get("machine") or {}).get("architecture") or "amd64",
                     "operatingSystem": "linux",
                     "osImage": "Garden Linux %s" % image.get("version", ""),
                     "kernelVersion": "6.12.0-gardenlinux-amd64", "containerRuntimeVersion": "containerd://2.0.4",
                     "kubeletVersion": kubelet, "kubeProxyVersion": "",
                     "machineID": "", "systemUUID": "", "bootID": ""},
    }


def internal_ip(node):
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return address.get("address")
    return None


class ShootNodes:
    """The Nodes of every reconciled Shoot's lab cluster; `ctl` is the gardenlet stand-in."""

    def __init__(self, ctl, ironcore_kube, kubes):
        self.ctl = ctl
        self.ironcore = ironcore_kube   # Kube of the IronCore cluster (ServerClaims)
        self.kubes = kubes              # cluster name -> (kubelet Kube, machine-controller Kube)

    def reconcile(self, shoots):
        claims = servers = None
        for shoot in shoots:
            cluster = self.ctl.lab_cluster(shoot)
            last = (shoot.get("status") or {}).get("lastOperation") or {}
            worker = worker_of(shoot)
            if (cluster is None or worker is None or cluster.name not in self.kubes
                    or shoot["metadata"].get("deletionTimestamp")
                    or last.get("type") not in ("Create", "Reconcile", "Restore") or last.get("state") != "Succeeded"):
                continue
            if claims is None:
                claims = self.ironcore.list(CLAIMS)
                servers = {s["metadata"]["name"]: s for s in self.ironcore.list(SERVERS)}
            self.reconcile_cluster(shoot, cluster, worker, claims, servers)

    def reconcile_cluster(self, shoot, cluster, worker, claims, servers):
        kubelet, mcm = self.kubes[cluster.name]
        nodes = {n["metadata"]["name"]: n for n in kubelet.list(NODES)
                 if (n["metadata"].get("labels") or {}).get(WORKER_POOL) == worker["name"]}
        names = wanted_servers(claims, cluster.name, int(worker.get("maximum") or 0), nodes)
        claim_of = claim_of_server(claims)
        addresses = assign_addresses(node_cidr(shoot, cluster.index), names,
                                     {n: internal_ip(o) for n, o in nodes.items() if internal_ip(o)})
        now = now_rfc3339()
        version, first = kubelet_version(shoot), self.first_of_cluster(shoot, cluster)
        for name in names:
            labels = node_labels(worker, name, servers.get(name))
            node = nodes.get(name)
            if node is None:
                node = mcm.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                                          "spec": {"providerID": provider_id(*claim_of[name])}})
                if node is None:
                    continue
                self.ctl.log("Node %s/%s registered" % (cluster.name, name))
            else:
                have = node["metadata"].get("labels") or {}
                missing = {k: v for k, v in labels.items() if have.get(k) != v}
                if missing:
                    node = mcm.patch(path("v1", "nodes", name=name), node, {"metadata": {"labels": missing}})
                    if node is None:
                        continue
            if internal_ip(node) != addresses[name] or not (node.get("status") or {}).get("conditions"):
                kubelet.patch(path("v1", "nodes", name=name), node,
                              {"status": node_status(name, addresses[name], worker, now, version)}, "status")
            elif first:
                self.roll_kubelet(cluster, kubelet, node, version)
        for name in sorted(set(nodes) - set(names)):
            mcm.delete(path("v1", "nodes", name=name))
            self.ctl.log("Node %s/%s removed (its claim is gone)" % (cluster.name, name))

    def roll_kubelet(self, cluster, kubelet, node, version):
        """A Node whose kubelet is not the Shoot's version gets it. Upstream a minor version rolls the worker pool
        (new machines), a patch restarts kubelet in place; the lab keeps the Node and changes its kubelet. Of several
        Shoots one lab cluster plays, the oldest's version counts."""
        info = (node.get("status") or {}).get("nodeInfo") or {}
        if info.get("kubeletVersion") == version:
            return
        name = node["metadata"]["name"]
        if kubelet.patch(path("v1", "nodes", name=name), node,
                         {"status": {"nodeInfo": dict(info, kubeletVersion=version)}}, "status") is not None:
            self.ctl.log("Node %s/%s: kubelet %s" % (cluster.name, name, version))

    def first_of_cluster(self, shoot, cluster):
        """Whether the Shoot is the oldest of those the lab cluster plays: its Nodes run that one's kubelet."""
        others = self.ctl.others_played_by(cluster, shoot)
        mine = (shoot["metadata"].get("creationTimestamp") or "", shoot["metadata"]["name"])
        return all(mine < (o["metadata"].get("creationTimestamp") or "", o["metadata"]["name"]) for o in others)

    def roll_shoot(self, shoot):
        """The flow's worker step: the Shoot's Nodes run its Kubernetes version."""
        cluster, worker = self.ctl.lab_cluster(shoot), worker_of(shoot)
        if (cluster is None or worker is None or cluster.name not in self.kubes
                or not self.first_of_cluster(shoot, cluster)):
            return
        kubelet, version = self.kubes[cluster.name][0], kubelet_version(shoot)
        for node in kubelet.list(NODES):
            if (node["metadata"].get("labels") or {}).get(WORKER_POOL) == worker["name"]:
                self.roll_kubelet(cluster, kubelet, node, version)
