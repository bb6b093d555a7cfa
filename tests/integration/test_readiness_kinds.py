"""Every kind of the readiness table, driven through its real status values on the lab's API servers.

The cases (readiness_cases.py) are the unit tests' status sequences, written here through the
status subresource of a real object, so the real CRD schemas (and the built-in kinds' status
validation) judge them: progressing is not ready and says why, ready for an older generation
is not ready, ready for the current one is ready, a terminal state ends a wait at once, and a
timeout names what is missing. Only the garbage-collector and namespace controllers run in the
lab, so the status we write stays; the K-ORC manager is the exception (see drive_korc).
"""

import copy
import os
import sys
import time
import uuid

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The collection imports itself by its collection path: the checkout's symlink under .cache.
COLLECTIONS = os.path.join(REPO, ".cache", "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

# pylint: disable=wrong-import-position
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeClient, KubeError  # noqa: E402
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter, WaitError  # noqa: E402
from readiness_cases import CASES, GEN, METAL_IGNORED  # noqa: E402
from regionlab import config, kube  # noqa: E402

FIELD_MANAGER = "readiness-test"
HOLD = "readiness-test.c5c3.io/hold"
OURS = "app.kubernetes.io/managed-by"
# The workloads' status is played here: the IronCore cluster runs no workload controllers (kube.py), unlike the
# clusters the region's charts go to, where Deployments, StatefulSets, DaemonSets and Jobs are really rolled out.
BUILTIN_CLUSTER = "baremetal"
# The K-ORC manager reconciles K-ORC objects on the control plane and rewrites their status at
# once; the management cluster serves a copy of a K-ORC CRD that no controller watches.
KORC_GROUP = "openstack.k-orc.cloud"
KORC_CLUSTER = "management-cluster"
KORC_SOURCE_CLUSTER = "lab-control-plane"
CRD_API = "apiextensions.k8s.io/v1"
DELETING = "metadata.deletionTimestamp is set: the object is being deleted"


# ---------------------------------------------------------------------------
# Where each kind is served: the first lab cluster whose API server serves its group (phase 3
# installed the operators' CRDs), built-in kinds on the management cluster. Kinds that a real
# controller reconciles where the lab serves them (K-ORC on the control plane, Flux on the
# management cluster and the Shoots) are driven on a cluster that serves a copy of their CRD and
# runs no controller.

COPIED = {KORC_GROUP: (KORC_SOURCE_CLUSTER, KORC_CLUSTER),
          "source.toolkit.fluxcd.io": ("management-cluster", "garden"),
          "helm.toolkit.fluxcd.io": ("management-cluster", "garden"),
          "kustomize.toolkit.fluxcd.io": ("management-cluster", "garden")}
_SERVED = {}


def _served_groups(cluster):
    if cluster.name not in _SERVED:
        resp = kube._session(cluster).get(cluster.server + "/apis", timeout=10)
        resp.raise_for_status()
        _SERVED[cluster.name] = set(g["name"] for g in resp.json()["groups"])
    return _SERVED[cluster.name]


def serving_cluster(api_version):
    group = readiness.group_of(api_version)
    if group in COPIED:
        return COPIED[group][1]
    if "/" not in api_version or group.endswith(".k8s.io") or "." not in group:
        return BUILTIN_CLUSTER
    for cluster in config.clusters():
        if group in _served_groups(cluster):
            return cluster.name
    raise AssertionError("no lab cluster serves %s (phase 3 installs the operators' CRDs)" % group)


# ---------------------------------------------------------------------------
# The lab side: clients, one namespace per cluster, cluster-scoped objects cleaned up per test.

class Lab:
    def __init__(self, kubeconfigs):
        self.kubeconfigs = kubeconfigs
        self.token = uuid.uuid4().hex[:6]
        self.namespace = "rt-kinds-%s" % self.token
        self.clients = {}
        self.namespaces = set()
        self.created = []

    def client(self, cluster):
        if cluster not in self.clients:
            self.clients[cluster] = KubeClient({"kubeconfig": self.kubeconfigs[cluster]})
        return self.clients[cluster]

    def ensure_namespace(self, cluster):
        if cluster not in self.namespaces:
            client = self.client(cluster)
            client.server_side_apply(client.resource("v1", "Namespace"), {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}},
                field_manager=FIELD_MANAGER)
            self.namespaces.add(cluster)

    def place(self, manifest, cluster, suffix=""):
        """The manifest with a name (unique per run when cluster-scoped) and this run's namespace."""
        placed = copy.deepcopy(manifest)
        slug = "rt-%s%s" % (manifest["kind"].lower(), suffix)
        rtype = self.client(cluster).resource(manifest["apiVersion"], manifest["kind"])
        metadata = placed.setdefault("metadata", {})
        if rtype.namespaced:
            self.ensure_namespace(cluster)
            metadata.update(name=slug, namespace=self.namespace)
        else:
            metadata["name"] = "rt-%s-%s%s" % (self.token, manifest["kind"].lower(), suffix)
        return placed

    def apply(self, client, manifest):
        rtype = client.resource(manifest["apiVersion"], manifest["kind"])
        obj = client.server_side_apply(rtype, manifest, field_manager=FIELD_MANAGER)
        if not rtype.namespaced and (client, rtype, obj["metadata"]["name"]) not in self.created:
            self.created.append((client, rtype, obj["metadata"]["name"]))
        return obj

    def cleanup_test(self):
        """Cluster-scoped objects of the test that just ran (the namespaces go at the end)."""
        while self.created:
            client, rtype, name = self.created.pop()
            release(client, rtype, name)
            client.delete(rtype, name, propagation="Background")

    def cleanup(self):
        for cluster in sorted(self.namespaces):
            client = self.client(cluster)
            # The API server gives every PVC the pvc-protection finalizer, and no controller of the
            # lab removes it: it would keep the namespace Terminating for good.
            pvcs = client.resource("v1", "PersistentVolumeClaim")
            for pvc in client.list(pvcs, self.namespace):
                client.request("PATCH", pvcs.path(self.namespace, pvc["metadata"]["name"]),
                               body={"metadata": {"finalizers": None}}, content_type="application/merge-patch+json")
            client.delete(client.resource("v1", "Namespace"), self.namespace, propagation="Background")


@pytest.fixture(scope="module")
def lab_env(kubeconfigs, region):  # the operators' CRDs come from phase 3
    env = Lab(kubeconfigs)
    yield env
    env.cleanup()


@pytest.fixture
def env(lab_env):
    yield lab_env
    lab_env.cleanup_test()


# ---------------------------------------------------------------------------
# Objects and status.

def ref_of(obj):
    meta = obj["metadata"]
    ref = {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"]}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return ref


def at_generation(value, generation):
    """A status template with GEN replaced by the generation it is written for."""
    if isinstance(value, dict):
        return dict((key, at_generation(item, generation)) for key, item in value.items())
    if isinstance(value, list):
        return [at_generation(item, generation) for item in value]
    return generation if value == GEN else value


def write_status(client, obj, status, generation):
    """Replace the whole status through the status subresource (what an operator's update does)."""
    rtype = client.resource(obj["apiVersion"], obj["kind"])
    meta = obj["metadata"]
    patch = [{"op": "add", "path": "/status", "value": at_generation(status, generation)}]
    return client.request(
        "PATCH", rtype.path(meta.get("namespace"), meta["name"], "status"), body=patch,
        query={"fieldManager": FIELD_MANAGER}, content_type="application/json-patch+json")[1]


def bumped(manifest, change):
    changed = copy.deepcopy(manifest)
    changed["spec"].update(copy.deepcopy(change))
    return changed


def release(client, rtype, name, namespace=None):
    """Drop our hold finalizer (when the object still exists)."""
    obj = client.get(rtype, name, namespace)
    if obj and HOLD in (obj["metadata"].get("finalizers") or []):
        finalizers = [f for f in obj["metadata"]["finalizers"] if f != HOLD]
        client.request("PATCH", rtype.path(namespace, name), body={"metadata": {"finalizers": finalizers or None}},
                       content_type="application/merge-patch+json")


# ---------------------------------------------------------------------------
# What the wait layer must say.

def expect(waiter, ref, ready, terminal=False, needle=None):
    states = waiter.check([ref])
    state = states[0][1]
    assert state is not None, "%(kind)s %(name)s not found" % ref
    assert (state.ready, state.terminal) == (ready, terminal), (ref["kind"], needle, state)
    if ready:
        assert state.missing == [], state
    if needle:
        assert needle in "; ".join(state.missing), (needle, state.missing)
    return state


def fails_fast(waiter, ref, needle):
    """A terminal state ends even a long wait at once, with the reason in the message."""
    started = time.monotonic()
    with pytest.raises(WaitError) as error:
        waiter.wait([ref], timeout=60)
    elapsed = time.monotonic() - started
    message = str(error.value)
    assert elapsed < 10, "terminal state took %.1fs to fail: %s" % (elapsed, message)
    assert "1 object(s) failed" in message and needle in message, (needle, message)


def times_out(waiter, ref, needle):
    """A wait that runs out names the object and what it is still missing."""
    with pytest.raises(WaitError) as error:
        waiter.wait([ref], timeout=2)
    message = str(error.value)
    assert "not ready after 2s" in message and ref["name"] in message and needle in message, (needle, message)


def stale(state, older, generation):
    """Not ready because the status (or its conditions) is for the older generation."""
    assert not state.ready and not state.terminal, state
    assert any("observedGeneration %d < metadata.generation %d" % (older, generation) in line
               or "is for generation %d, metadata.generation is %d" % (older, generation) in line
               for line in state.missing), state.missing


# ---------------------------------------------------------------------------
# Drivers.

def drive(env, case, cluster, terminal=True):
    """The common sequence: absent, created, not ready, stale, ready, terminal, held."""
    client = env.client(cluster)
    waiter = Waiter(client, sleep=0.2)
    manifest = env.place(case.manifest, cluster)
    ref = ref_of(manifest)
    assert waiter.check([ref])[0][1] is None  # absent: no verdict, the wait layer says "not found"
    obj = env.apply(client, manifest)
    generation = obj["metadata"].get("generation")
    # Fresh from the API server (with whatever status its defaults give): ready only when the kind
    # has no status.
    expect(waiter, ref, case.ready is None)
    for status, needle in case.not_ready:
        obj = write_status(client, obj, status, generation)
        expect(waiter, ref, False, False, needle)
    if case.timeout:
        times_out(waiter, ref, case.not_ready[-1][1])
    if case.bump:
        older = generation
        obj = env.apply(client, bumped(manifest, case.bump))
        generation = obj["metadata"]["generation"]
        assert generation == older + 1, "the spec change did not raise metadata.generation"
        obj = write_status(client, obj, case.ready, older)
        stale(expect(waiter, ref, False), older, generation)
    if case.ready is not None:
        obj = write_status(client, obj, case.ready, generation)
        expect(waiter, ref, True)
    for status, needle in (case.terminal if terminal else ()):
        obj = write_status(client, obj, status, generation)
        fails_fast(waiter, ref, needle)
    if case.hold:
        hold_and_delete(env, client, waiter, manifest)


def hold_and_delete(env, client, waiter, manifest):
    """Terminal for every kind: deleted, but kept by a finalizer (only the API server sets this state)."""
    rtype = client.resource(manifest["apiVersion"], manifest["kind"])
    meta = manifest["metadata"]
    held = copy.deepcopy(manifest)
    held["metadata"]["finalizers"] = [HOLD]
    env.apply(client, held)
    try:
        client.delete(rtype, meta["name"], meta.get("namespace"), propagation="Background")
        fails_fast(waiter, ref_of(manifest), DELETING)
    finally:
        release(client, rtype, meta["name"], meta.get("namespace"))


def drive_fresh_terminal(env, case, cluster):
    """A finished Job cannot fail later (the API server refuses Complete -> Failed): a second Job fails."""
    drive(env, case, cluster, terminal=False)
    client = env.client(cluster)
    failed = env.place(case.manifest, cluster, suffix="-failed")
    obj = env.apply(client, failed)
    for status, needle in case.terminal:
        obj = write_status(client, obj, status, obj["metadata"].get("generation"))
        fails_fast(Waiter(client, sleep=0.2), ref_of(failed), needle)


def drive_server_claim(env, case, cluster):
    """ServerClaim: Bound is not enough, the bound Server (found through lookup) decides."""
    client = env.client(cluster)
    waiter = Waiter(client, sleep=0.2)
    claim = env.place(case.manifest, cluster)
    server = env.place({"apiVersion": case.api_version, "kind": "Server", "metadata": METAL_IGNORED, "spec": {
        "systemUUID": "38947555-7742-3448-3784-823347823835",
        "serverClaimRef": {"namespace": claim["metadata"]["namespace"], "name": claim["metadata"]["name"]}}},
        cluster, suffix="-bound")
    name = server["metadata"]["name"]
    claim["spec"]["serverRef"] = {"name": name}
    server_obj = env.apply(client, server)
    claim_obj = env.apply(client, claim)
    ref = ref_of(claim)

    write_status(client, claim_obj, {"phase": "Unbound"}, None)
    expect(waiter, ref, False, False, "status.phase is Unbound, want Bound")
    write_status(client, claim_obj, {"phase": "Bound"}, None)
    write_status(client, server_obj, {"state": "Available", "powerState": "Off"}, None)
    state = expect(waiter, ref, False, False, "bound Server %s: status.state is Available, want Reserved" % name)
    assert "bound Server %s: status.powerState is Off, want On" % name in state.missing
    write_status(client, server_obj, {"state": "Reserved", "powerState": "PoweringOn"}, None)
    expect(waiter, ref, False, False, "bound Server %s: status.powerState is PoweringOn, want On" % name)
    times_out(waiter, ref, "status.powerState is PoweringOn, want On")
    write_status(client, server_obj, {"state": "Reserved", "powerState": "On"}, None)
    expect(waiter, ref, True)
    write_status(client, server_obj, {"state": "Error", "powerState": "On"}, None)
    fails_fast(waiter, ref, "bound Server %s: status.state is Error" % name)


def drive_namespace(env, case, cluster):
    """The API server owns a namespace's phase: Active on create, Terminating once deleted."""
    client = env.client(cluster)
    waiter = Waiter(client, sleep=0.2)
    manifest = env.place(case.manifest, cluster)
    manifest["metadata"]["finalizers"] = [HOLD]  # keeps it Terminating long enough to be seen
    ref = ref_of(manifest)
    rtype = client.resource("v1", "Namespace")
    env.apply(client, manifest)
    try:
        expect(waiter, ref, True)
        client.delete(rtype, manifest["metadata"]["name"], propagation="Background")
        fails_fast(waiter, ref, "status.phase is Terminating")
        assert DELETING in "; ".join(waiter.check([ref])[0][1].missing)
    finally:
        release(client, rtype, manifest["metadata"]["name"])


def crd_manifest(group, plural, kind):
    return {"apiVersion": CRD_API, "kind": "CustomResourceDefinition",
            "metadata": {"name": "%s.%s" % (plural, group)},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def drive_crd(env, case, cluster):
    """CRD status is written by the API server's own naming and establishing controllers."""
    del case
    client = env.client(cluster)
    waiter = Waiter(client, sleep=0.2)
    group = "rt%s.readiness.test" % env.token
    alphas = crd_manifest(group, "alphas", "Alpha")
    # Another plural with the same kind: the naming controller refuses its names for good.
    conflicting = crd_manifest(group, "betas", "Alpha")
    assert waiter.check([ref_of(alphas)])[0][1] is None
    env.apply(client, alphas)
    waiter.wait([ref_of(alphas)], timeout=30)
    expect(waiter, ref_of(alphas), True)
    env.apply(client, conflicting)
    fails_fast(waiter, ref_of(conflicting),
               'condition NamesAccepted is False (reason ListKindConflict: "AlphaList" is already in use)')


def copy_crd(env, case, cluster):
    """The real CRD of a kind that a controller reconciles where the lab serves it, on a cluster without one."""
    client = env.client(cluster)
    crd_type = client.resource(CRD_API, "CustomResourceDefinition")
    group = readiness.group_of(case.api_version)
    source = env.client(COPIED[group][0])
    name = "%s.%s" % (source.resource(case.api_version, case.kind).name, group)
    # The CRD exactly as the lab installed it (K-ORC's chart, Flux's install).
    upstream = source.get(source.resource(CRD_API, "CustomResourceDefinition"), name)
    found = client.get(crd_type, name)
    assert found is None or found["metadata"].get("labels", {}).get(OURS) == FIELD_MANAGER, (
        "%s is already on %s and not ours to remove" % (name, cluster))
    crd = {"apiVersion": CRD_API, "kind": "CustomResourceDefinition",
           "metadata": {"name": name, "labels": {OURS: FIELD_MANAGER}}, "spec": upstream["spec"]}
    env.apply(client, crd)
    Waiter(client, sleep=0.2).wait([ref_of(crd)], timeout=60)
    deadline = time.monotonic() + 30
    while True:  # discovery may trail Established by a moment
        try:
            client.resource(case.api_version, case.kind)
            break
        except KubeError:
            assert time.monotonic() < deadline, "%s not served after Established" % name
            time.sleep(0.2)


def drive_korc(env, case, cluster):
    """K-ORC objects on a cluster that serves the real K-ORC CRD but runs no K-ORC manager."""
    drive(env, case, cluster)


DRIVERS = {
    None: drive,
    "fresh_terminal": drive_fresh_terminal,
    "server_claim": drive_server_claim,
    "namespace": drive_namespace,
    "crd": drive_crd,
    "korc": drive_korc,
}


# ---------------------------------------------------------------------------
# The tests.

def rule_key(covered_kind):
    group, kind = covered_kind.rsplit("/", 1)
    return ("" if group == "core" else group, kind)


def test_every_kind_of_the_table_has_a_lab_case():
    assert sorted(CASES) == readiness.covered_kinds()


@pytest.mark.parametrize("kind", readiness.covered_kinds())
def test_kind_through_its_real_status_values(env, kind):
    case = CASES.get(kind)
    assert case is not None, "the readiness table has %s but readiness_cases.py has no case for it" % kind
    # The case's object falls under the rule it stands for (group wildcards included).
    rule = readiness.rule_for(readiness.group_of(case.api_version), case.kind)
    assert rule is readiness.RULES[rule_key(kind)], "%s/%s is not judged by the %s rule" % (
        case.api_version, case.kind, kind)
    cluster = serving_cluster(case.api_version)
    if readiness.group_of(case.api_version) in COPIED:
        copy_crd(env, case, cluster)
    DRIVERS[case.driver](env, case, cluster)


def variant_params():
    params = []
    for kind, case in sorted(CASES.items()):
        for label, spec in case.variants:
            name = "%s-%s" % (kind, label)
            params.append(pytest.param(kind, label, spec, id=name))
    return params


@pytest.mark.parametrize("kind, label, spec", variant_params())
def test_kind_without_status_is_ready_as_created(env, kind, label, spec):
    """Objects of a status-tracked kind that have no status by their spec: ready as the API server creates them."""
    case = CASES[kind]
    cluster = serving_cluster(case.api_version)
    if readiness.group_of(case.api_version) in COPIED:
        copy_crd(env, case, cluster)
    client = env.client(cluster)
    variant = env.place(dict(case.manifest, spec=spec), cluster, suffix="-%s" % label.lower())
    env.apply(client, variant)
    expect(Waiter(client, sleep=0.2), ref_of(variant), True)
