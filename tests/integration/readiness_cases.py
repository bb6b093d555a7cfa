"""One lab case per kind of the readiness table: a minimal object the real CRD schema accepts and
the status values its operator writes, in the order they come (test_readiness_kinds.py drives them).

Status templates use GEN where the operator writes the object's generation; the driver puts in
the generation the status is meant for (the current one, or the older one for the stale step).
Needles are the text the rule must report in `missing` (read from the unit tests' cases).
"""

GEN = "<generation>"
T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-01T00:05:00Z"


class Case:
    """How one kind of the table is driven on a lab API server.

    manifest: apiVersion, kind and spec of the object (name and namespace are the driver's).
    not_ready: (status, needle) written one after the other, each not ready and not terminal.
    bump: a spec change that raises metadata.generation (None: the kind does not track it).
    ready: the status that makes it ready (None: the kind has no status, existing is enough).
    terminal: (status, needle) written last, each must end a wait at once.
    timeout: also wait 2 s on the last not-ready status; the timeout must name the needle.
    hold: terminal by deletion (a finalizer of ours keeps the object with deletionTimestamp).
    driver: name of a custom driver in the test module (kinds whose status the API server owns).
    variants: (label, spec) of objects of the kind that are ready without any status.
    """

    def __init__(self, manifest, not_ready=(), bump=None, ready=None, terminal=(), timeout=False, hold=False,
                 driver=None, variants=()):
        self.manifest = manifest
        self.not_ready = list(not_ready)
        self.bump = bump
        self.ready = ready
        self.terminal = list(terminal)
        self.timeout = timeout
        self.hold = hold
        self.driver = driver
        self.variants = list(variants)

    @property
    def api_version(self):
        return self.manifest["apiVersion"]

    @property
    def kind(self):
        return self.manifest["kind"]


def cond(ctype, status, reason, message="", og=None):
    """A condition as metav1.Condition requires it (reason and message present, a transition time)."""
    found = {"type": ctype, "status": status, "reason": reason, "message": message, "lastTransitionTime": T0}
    if og is not None:
        found["observedGeneration"] = og
    return found


def obj(api_version, kind, spec=None, **top):
    manifest = {"apiVersion": api_version, "kind": kind}
    if spec is not None:
        manifest["spec"] = spec
    manifest.update(top)
    return manifest


# metal-operator's annotation that makes it skip an object (api/v1alpha1 OperationAnnotation, OperationAnnotationIgnore).
METAL_IGNORED = {"annotations": {"metal.ironcore.dev/operation": "ignore"}}


# ---------------------------------------------------------------------------
# Gardener

SHOOT = "core.gardener.cloud/v1beta1"
SHOOT_OK = [dict(cond(ctype, "True", reason), lastUpdateTime=T0) for ctype, reason in (
    ("APIServerAvailable", "HealthzRequestSucceeded"), ("ControlPlaneHealthy", "ControlPlaneRunning"),
    ("ObservabilityComponentsHealthy", "ObservabilityComponentsRunning"), ("EveryNodeReady", "EveryNodeReady"),
    ("SystemComponentsHealthy", "SystemComponentsRunning"))]


def last_op(op_type, state, progress, description):
    return {"type": op_type, "state": state, "progress": progress, "description": description, "lastUpdateTime": T0}


# ---------------------------------------------------------------------------
# Flux: every kind goes through the same condition sequence.

def flux(api_version, kind, spec, bump, **extra):
    return Case(
        obj(api_version, kind, spec),
        not_ready=[
            ({"observedGeneration": GEN, "conditions": [
                cond("Reconciling", "True", "Progressing", "reconciliation in progress", og=GEN),
                cond("Ready", "Unknown", "Progressing", "reconciliation in progress", og=GEN)]},
             "condition Reconciling is True (reason Progressing: reconciliation in progress)"),
            # A failed attempt is retried: not terminal.
            ({"observedGeneration": GEN, "conditions": [
                cond("Ready", "False", "InstallFailed", "chart not found", og=GEN)]},
             "condition Ready is False (reason InstallFailed: chart not found)"),
        ],
        bump=bump,
        ready={"observedGeneration": GEN, "conditions": [cond("Ready", "True", "Succeeded", "stored artifact", og=GEN)]},
        terminal=[({"observedGeneration": GEN, "conditions": [
            cond("Stalled", "True", "RetriesExceeded", "Failed to install after 1 attempt(s)", og=GEN),
            cond("Ready", "False", "InstallFailed", "context deadline exceeded", og=GEN)]},
            "condition Stalled is True (reason RetriesExceeded: Failed to install after 1 attempt(s))")],
        **extra)


# ---------------------------------------------------------------------------
# Rook: the phase kinds share one sequence (Progressing and Failure are written without
# touching observedGeneration, Ready with it).

ROOK = "ceph.rook.io/v1"


def rook_phase(kind, spec, bump):
    return Case(
        obj(ROOK, kind, spec),
        not_ready=[({"phase": "Progressing"}, "status.phase is Progressing, want Ready")],
        bump=bump,
        ready={"phase": "Ready", "observedGeneration": GEN},
        terminal=[({"phase": "Failure", "observedGeneration": GEN}, "status.phase is Failure")])


# ---------------------------------------------------------------------------
# K-ORC (the whole group has one rule).

KORC = "openstack.k-orc.cloud/v1alpha1"


def korc_conditions(available, progressing, reason, message, og=GEN):
    return {"conditions": [cond("Available", available, reason, message, og=og),
                           cond("Progressing", progressing, reason, message, og=og)]}


# ---------------------------------------------------------------------------
# Kubernetes built-in kinds.

LABELS = {"app": "readiness-test"}
POD_SPEC = {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": POD_SPEC}
NEW_TEMPLATE = {"metadata": {"labels": LABELS, "annotations": {"rollout": "2"}}, "spec": POD_SPEC}


def job_spec():
    return {"backoffLimit": 6, "template": {"spec": dict(POD_SPEC, restartPolicy="Never")}}


CASES = {
    # --- Gardener
    "core.gardener.cloud/Shoot": Case(
        obj(SHOOT, "Shoot", {"cloudProfile": {"kind": "CloudProfile", "name": "ironcore"}, "region": "eu-de-1",
                             "provider": {"type": "ironcore-metal"}, "purpose": "evaluation"}),
        not_ready=[
            ({"observedGeneration": GEN, "lastOperation": last_op(
                "Create", "Processing", 40, "Waiting until infrastructure is ready")},
             "lastOperation Create Processing 40%: Waiting until infrastructure is ready"),
            # Error is retried by Gardener: not terminal, the lastErrors are reported.
            ({"observedGeneration": GEN, "lastOperation": last_op("Create", "Error", 30, "Flow failed"),
              "lastErrors": [{"description": "infrastructure: quota exceeded", "taskID": "deployInfra",
                              "codes": ["ERR_INFRA_QUOTA_EXCEEDED"]}]},
             "lastErrors: infrastructure: quota exceeded (codes ERR_INFRA_QUOTA_EXCEEDED)"),
        ],
        bump={"purpose": "testing"},
        ready={"observedGeneration": GEN, "conditions": SHOOT_OK,
               "lastOperation": last_op("Reconcile", "Succeeded", 100, "Shoot cluster has been successfully reconciled.")},
        terminal=[({"observedGeneration": GEN, "conditions": SHOOT_OK,
                    "lastOperation": last_op("Reconcile", "Failed", 30, "Flow failed"),
                    "lastErrors": [{"description": "bad credentials", "codes": ["ERR_INFRA_UNAUTHENTICATED"]}]},
                   "lastOperation Reconcile Failed 30%: Flow failed")],
        timeout=True),

    # --- IronCore metal-operator (BMC, BMCSecret, Server are cluster-scoped). The lab runs the real one: the
    # objects the test plays the operator for carry its ignore annotation (shouldIgnoreReconciliation).
    "metal.ironcore.dev/BMC": Case(
        obj("metal.ironcore.dev/v1alpha1", "BMC", {
            "bmcSecretRef": {"name": "rt-bmc-secret"}, "protocol": {"name": "Redfish", "port": 8000},
            "access": {"ip": "192.0.2.10", "macAddress": "aa:bb:cc:00:00:01"}}, metadata=METAL_IGNORED),
        not_ready=[
            ({"state": "Pending", "conditions": [cond("Ready", "False", "ConnectionFailed", "BMC service unavailable")]},
             "condition Ready is False (reason ConnectionFailed: BMC service unavailable)"),
            # Error mirrors the BMC and is retried: not terminal.
            ({"state": "Error", "conditions": [
                cond("Ready", "False", "ConnectionFailed", "BMC service unavailable")]},
             "status.state is Error, want Enabled"),
            # Enabled is not enough: metal-operator keeps the state when the BMC stops answering.
            ({"state": "Enabled", "conditions": [
                cond("Ready", "False", "UnknownError", "BMC connection error: timeout")]},
             "condition Ready is False (reason UnknownError: BMC connection error: timeout)"),
        ],
        ready={"state": "Enabled", "powerState": "On", "conditions": [cond("Ready", "True", "Connected")]},
        # A refused login leaves the state Enabled: terminal (the collection fails with the BMC's message).
        terminal=[({"state": "Enabled", "conditions": [
            cond("Ready", "False", "AuthenticationFailed", "BMC credentials are invalid")]},
            "condition Ready is False (reason AuthenticationFailed: BMC credentials are invalid)")],
        timeout=True),
    "metal.ironcore.dev/BMCSecret": Case(
        obj("metal.ironcore.dev/v1alpha1", "BMCSecret", data={"username": "YWRtaW4=", "password": "c2VjcmV0"}),
        hold=True),
    "metal.ironcore.dev/Server": Case(
        obj("metal.ironcore.dev/v1alpha1", "Server", {"systemUUID": "38947555-7742-3448-3784-823347823834"},
            metadata=METAL_IGNORED),
        not_ready=[({"state": "Initial"}, "status.state is Initial, want Available or Reserved"),
                   ({"state": "Discovery", "powerState": "On"}, "status.state is Discovery"),
                   ({"state": "Maintenance"}, "status.state is Maintenance")],
        ready={"state": "Available", "powerState": "Off"},
        terminal=[({"state": "Error"}, "status.state is Error")]),
    "metal.ironcore.dev/ServerClaim": Case(
        obj("metal.ironcore.dev/v1alpha1", "ServerClaim", {
            "power": "On", "image": "ghcr.io/gardenlinux/gardenlinux:1592", "ignitionSecretRef": {"name": "ignition"}},
            metadata=METAL_IGNORED),
        driver="server_claim"),
    "metal.ironcore.dev/ServerBootConfiguration": Case(
        obj("metal.ironcore.dev/v1alpha1", "ServerBootConfiguration", {
            "serverRef": {"name": "server-1"}, "image": "ghcr.io/gardenlinux/gardenlinux:1592"}),
        not_ready=[({"state": "Pending"}, "status.state is Pending, want Ready")],
        ready={"state": "Ready"},
        terminal=[({"state": "Error", "conditions": [
            cond("ImageValidation", "False", "ValidationFailed", "registry docker.io is not in the allowed list",
                 og=GEN)]},
            "condition ImageValidation is False (reason ValidationFailed: registry docker.io is not in the allowed list)")]),

    # --- Rook
    "ceph.rook.io/CephCluster": Case(
        obj(ROOK, "CephCluster", {"dataDirHostPath": "/var/lib/rook", "mon": {"count": 3},
                                  "cephVersion": {"image": "quay.io/ceph/ceph:v19.2.3"}}),
        not_ready=[
            ({"phase": "Progressing", "state": "Creating", "message": "Configuring Ceph Mons"},
             "status.message: Configuring Ceph Mons"),
            ({"phase": "Ready", "state": "Created", "observedGeneration": GEN, "ceph": {
                "health": "HEALTH_ERR", "details": {"OSD_FULL": {"severity": "HEALTH_ERR", "message": "1 full osd(s)"}}}},
             "status.ceph.health is HEALTH_ERR (OSD_FULL: 1 full osd(s))"),
            # The operator retries failed orchestrations: not terminal.
            ({"phase": "Failure", "state": "Error", "observedGeneration": GEN,
              "message": "failed to start ceph monitors"}, "status.message: failed to start ceph monitors"),
        ],
        bump={"mon": {"count": 5}},
        ready={"phase": "Ready", "state": "Created", "observedGeneration": GEN, "message": "Cluster created successfully",
               "ceph": {"health": "HEALTH_WARN", "details": {
                   "MON_DISK_LOW": {"severity": "HEALTH_WARN", "message": "mon a is low on available space"}}}},
        timeout=True),
    "ceph.rook.io/CephBlockPool": rook_phase(
        "CephBlockPool", {"replicated": {"size": 3}}, {"replicated": {"size": 2}}),
    "ceph.rook.io/CephClient": rook_phase(
        "CephClient", {"caps": {"mon": "profile rbd"}}, {"caps": {"mon": "profile rbd", "osd": "profile rbd"}}),
    "ceph.rook.io/CephFilesystem": rook_phase(
        "CephFilesystem", {"metadataPool": {"replicated": {"size": 3}},
                           "dataPools": [{"name": "replicated", "replicated": {"size": 3}}],
                           "metadataServer": {"activeCount": 1}},
        {"metadataServer": {"activeCount": 1, "activeStandby": True}}),
    "ceph.rook.io/CephObjectStore": Case(
        obj(ROOK, "CephObjectStore", {"metadataPool": {"replicated": {"size": 3}},
                                      "dataPool": {"replicated": {"size": 3}}, "gateway": {"port": 80, "instances": 1}}),
        not_ready=[({"phase": "Progressing"}, "status.phase is Progressing, want Ready or Connected")],
        bump={"gateway": {"port": 80, "instances": 2}},
        ready={"phase": "Ready", "observedGeneration": GEN, "info": {"endpoint": "http://rook-ceph-rgw-rt:80"}},
        terminal=[({"phase": "Failure", "observedGeneration": GEN}, "status.phase is Failure")]),
    "ceph.rook.io/CephObjectStoreUser": Case(
        obj(ROOK, "CephObjectStoreUser", {"store": "rt-store", "displayName": "readiness test"}),
        not_ready=[({"phase": ""}, "status.phase is not reported yet, want Ready"),
                   # Also written while the object store is not ready yet, and retried.
                   ({"phase": "ReconcileFailed"}, "status.phase is ReconcileFailed, want Ready")],
        bump={"displayName": "readiness test 2"},
        ready={"phase": "Ready", "observedGeneration": GEN, "info": {"secretName": "rook-ceph-object-user-rt-store-u"}}),
    "ceph.rook.io/CephRBDMirror": Case(
        obj(ROOK, "CephRBDMirror", {"count": 1}),
        not_ready=[({"phase": ""}, "status.phase is not reported yet")],
        bump={"count": 2},
        ready={"phase": "Ready", "observedGeneration": GEN},
        terminal=[({"phase": "Failed", "observedGeneration": GEN}, "status.phase is Failed")]),

    # --- K-ORC: unmanaged, imported by a filter that matches nothing (the driver serves the CRD
    # where no K-ORC manager watches it).
    "openstack.k-orc.cloud/*": Case(
        obj(KORC, "Project", {"cloudCredentialsRef": {"secretName": "lab-clouds-yaml", "cloudName": "lab"},
                              "managementPolicy": "unmanaged", "import": {"filter": {"name": "rt-never-matches"}}}),
        not_ready=[
            # What the lab's K-ORC manager writes while the credentials secret is missing.
            (korc_conditions("False", "True", "Progressing", "Waiting for Secret/absent to be created"),
             "condition Progressing is True (reason Progressing: Waiting for Secret/absent to be created)"),
            (korc_conditions("False", "True", "TransientError", "503 Service Unavailable"),
             "condition Available is False (reason TransientError: 503 Service Unavailable)"),
        ],
        bump={"cloudCredentialsRef": {"secretName": "lab-clouds-yaml", "cloudName": "lab-2"}},
        ready={"conditions": [cond("Available", "True", "Success", "OpenStack resource is available", og=GEN),
                              cond("Progressing", "False", "Success", "OpenStack resource is up to date", og=GEN)]},
        terminal=[(korc_conditions("False", "False", "InvalidConfiguration", "filter matched 2 resources"),
                   "condition Progressing is False (reason InvalidConfiguration: filter matched 2 resources)")],
        timeout=True, driver="korc"),

    # --- Flux
    "source.toolkit.fluxcd.io/HelmRepository": flux(
        "source.toolkit.fluxcd.io/v1", "HelmRepository", {"url": "https://charts.example.com", "interval": "10m"},
        {"interval": "5m"},
        # type oci: a static object, source-controller writes no status.
        variants=[("oci", {"url": "oci://ghcr.io/c5c3/charts", "type": "oci", "interval": "10m"})]),
    "source.toolkit.fluxcd.io/GitRepository": flux(
        "source.toolkit.fluxcd.io/v1", "GitRepository",
        {"url": "https://github.com/c5c3/forge", "interval": "10m", "ref": {"branch": "main"}}, {"interval": "5m"}),
    "source.toolkit.fluxcd.io/HelmChart": flux(
        "source.toolkit.fluxcd.io/v1", "HelmChart",
        {"chart": "podinfo", "interval": "10m", "sourceRef": {"kind": "HelmRepository", "name": "rt-charts"}},
        {"version": "6.x"}),
    "source.toolkit.fluxcd.io/OCIRepository": flux(
        "source.toolkit.fluxcd.io/v1", "OCIRepository",
        {"url": "oci://ghcr.io/c5c3/manifests", "interval": "10m", "ref": {"tag": "latest"}}, {"interval": "5m"}),
    "helm.toolkit.fluxcd.io/HelmRelease": flux(
        "helm.toolkit.fluxcd.io/v2", "HelmRelease",
        {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": "rt-chart"}}, {"interval": "5m"},
        timeout=True),
    "kustomize.toolkit.fluxcd.io/Kustomization": flux(
        "kustomize.toolkit.fluxcd.io/v1", "Kustomization",
        {"interval": "10m", "prune": True, "path": "./", "sourceRef": {"kind": "GitRepository", "name": "rt-repo"}},
        {"interval": "5m"}),

    # --- mariadb-operator (no observedGeneration reported)
    "k8s.mariadb.com/MariaDB": Case(
        obj("k8s.mariadb.com/v1alpha1", "MariaDB", {"replicas": 3, "storage": {"size": "1Gi"}}),
        not_ready=[({"conditions": [cond("Ready", "False", "StatefulSetNotReady", "Not ready")]},
                    "condition Ready is False (reason StatefulSetNotReady: Not ready)")],
        ready={"conditions": [cond("Ready", "True", "StatefulSetReady", "Running")]}),
    "k8s.mariadb.com/Database": Case(
        obj("k8s.mariadb.com/v1alpha1", "Database", {"mariaDbRef": {"name": "rt-mariadb"}}),
        not_ready=[({"conditions": [cond("Ready", "False", "MariaDBNotReady", "MariaDB not ready")]},
                    "condition Ready is False (reason MariaDBNotReady: MariaDB not ready)")],
        ready={"conditions": [cond("Ready", "True", "Created", "Created")]}),
    "k8s.mariadb.com/User": Case(
        obj("k8s.mariadb.com/v1alpha1", "User", {"mariaDbRef": {"name": "rt-mariadb"}}),
        not_ready=[({"conditions": [cond("Ready", "False", "MariaDBNotReady", "MariaDB not ready")]},
                    "reason MariaDBNotReady")],
        ready={"conditions": [cond("Ready", "True", "Created", "Created")]}),
    "k8s.mariadb.com/Grant": Case(
        obj("k8s.mariadb.com/v1alpha1", "Grant", {"mariaDbRef": {"name": "rt-mariadb"}, "privileges": ["SELECT"],
                                                  "database": "*", "table": "*", "username": "rt-user"}),
        not_ready=[({"conditions": [cond("Ready", "False", "Failed", "Error creating Grant")]},
                    "condition Ready is False (reason Failed: Error creating Grant)")],
        ready={"conditions": [cond("Ready", "True", "Created", "Created")]}),
    # mariadb-operator reports a failed Job as Complete=True too (pkg/condition/complete.go): only JobFailed tells.
    "k8s.mariadb.com/Backup": Case(
        obj("k8s.mariadb.com/v1alpha1", "Backup", {
            "mariaDbRef": {"name": "rt-mariadb"}, "storage": {"s3": {"bucket": "b", "endpoint": "s3.invalid:9000"}}}),
        not_ready=[({"conditions": [cond("Complete", "False", "Failed", "MariaDB not ready")]},
                    "condition Complete is False (reason Failed: MariaDB not ready)"),
                   ({"conditions": [cond("Complete", "False", "JobRunning", "Running")]}, "reason JobRunning")],
        ready={"conditions": [cond("Complete", "True", "JobComplete", "Success")]},
        terminal=[({"conditions": [cond("Complete", "True", "JobFailed", "Failed")]},
                   "condition Complete is True (reason JobFailed: Failed)")]),
    "k8s.mariadb.com/Restore": Case(
        obj("k8s.mariadb.com/v1alpha1", "Restore", {
            "mariaDbRef": {"name": "rt-mariadb"}, "backupRef": {"name": "rt-backup"}}),
        not_ready=[({"conditions": [cond("Complete", "False", "Failed", "Backup not complete")]},
                    "reason Failed: Backup not complete")],
        ready={"conditions": [cond("Complete", "True", "JobComplete", "Success")]},
        terminal=[({"conditions": [cond("Complete", "True", "JobFailed", "Failed")]}, "reason JobFailed")]),

    # --- RabbitMQ
    "rabbitmq.com/RabbitmqCluster": Case(
        obj("rabbitmq.com/v1beta1", "RabbitmqCluster", {"replicas": 3}),
        not_ready=[
            ({"observedGeneration": GEN, "conditions": [
                cond("AllReplicasReady", "False", "NotAllPodsReady", "1/3 Pods ready"),
                cond("ClusterAvailable", "False", "EndpointsNotReady", "Could not find an available endpoint"),
                cond("NoWarnings", "True", "NoWarnings"),
                cond("ReconcileSuccess", "True", "Success", "Finish reconciling")]},
             "condition AllReplicasReady is False (reason NotAllPodsReady: 1/3 Pods ready)"),
            # A failed reconcile is retried: not terminal.
            ({"observedGeneration": GEN, "conditions": [
                cond("AllReplicasReady", "True", "AllPodsAreReady"),
                cond("ClusterAvailable", "True", "AtLeastOneEndpointAvailable"),
                cond("ReconcileSuccess", "False", "Error", "failed to update StatefulSet")]},
             "condition ReconcileSuccess is False (reason Error: failed to update StatefulSet)"),
        ],
        bump={"replicas": 5},
        ready={"observedGeneration": GEN, "conditions": [
            cond("AllReplicasReady", "True", "AllPodsAreReady"),
            cond("ClusterAvailable", "True", "AtLeastOneEndpointAvailable"),
            cond("NoWarnings", "True", "NoWarnings"), cond("ReconcileSuccess", "True", "Success")]},
        timeout=True),
    "rabbitmq.com/User": Case(
        obj("rabbitmq.com/v1beta1", "User", {"rabbitmqClusterReference": {"name": "rt-rabbit"}}),
        not_ready=[({"observedGeneration": GEN, "username": "", "conditions": [
            cond("Ready", "False", "FailedCreateOrUpdate", "cluster not found")]}, "cluster not found")],
        bump={"tags": ["management"]},
        ready={"observedGeneration": GEN, "username": "rt-user", "credentials": {"name": "rt-user-user-credentials"},
               "conditions": [cond("Ready", "True", "SuccessfulCreateOrUpdate")]}),
    "rabbitmq.com/Vhost": Case(
        obj("rabbitmq.com/v1beta1", "Vhost", {"name": "/c5c3", "rabbitmqClusterReference": {"name": "rt-rabbit"}}),
        # Ready without observedGeneration: the topology operator always writes it.
        not_ready=[({"conditions": [cond("Ready", "True", "SuccessfulCreateOrUpdate")]},
                    "status.observedGeneration is not reported yet")],
        bump={"tracing": True},
        ready={"observedGeneration": GEN, "conditions": [cond("Ready", "True", "SuccessfulCreateOrUpdate")]}),
    "rabbitmq.com/Permission": Case(
        obj("rabbitmq.com/v1beta1", "Permission", {
            "vhost": "/c5c3", "user": "rt-user", "rabbitmqClusterReference": {"name": "rt-rabbit"},
            "permissions": {"configure": ".*", "read": ".*", "write": ".*"}}),
        not_ready=[({"observedGeneration": GEN, "conditions": [
            cond("Ready", "False", "FailedCreateOrUpdate", "user rt-user not found")]}, "condition Ready is False")],
        bump={"permissions": {"configure": "", "read": ".*", "write": ".*"}},
        ready={"observedGeneration": GEN, "conditions": [cond("Ready", "True", "SuccessfulCreateOrUpdate")]}),

    # --- SAP valkey-operator (component-operator-runtime)
    "cache.cs.sap.com/Valkey": Case(
        obj("cache.cs.sap.com/v1alpha1", "Valkey", {"replicas": 1}),
        not_ready=[
            ({"observedGeneration": GEN, "state": "Processing", "conditions": [
                cond("Ready", "False", "Processing", "Waiting for dependents")]},
             "status.state is Processing, want Ready"),
            # Error is retried by the runtime: not terminal, its Ready condition is reported.
            ({"observedGeneration": GEN, "state": "Error", "conditions": [
                cond("Ready", "False", "Error", "timeout waiting for statefulset")]},
             "condition Ready is False (reason Error: timeout waiting for statefulset)"),
        ],
        bump={"replicas": 3},
        ready={"observedGeneration": GEN, "appliedGeneration": GEN, "state": "Ready",
               "conditions": [cond("Ready", "True", "Ready", "Dependents successfully recreated")]}),

    # --- c5c3
    "memcached.c5c3.io/Memcached": Case(
        obj("memcached.c5c3.io/v1beta1", "Memcached", {"replicas": 3}),
        not_ready=[({"observedGeneration": GEN, "readyReplicas": 0, "conditions": [
            cond("Available", "False", "Unavailable", "0/3 replicas are ready", og=GEN),
            cond("Progressing", "True", "Progressing", "Rollout in progress: 1/3 replicas updated", og=GEN),
            cond("Degraded", "True", "Degraded", "Only 0/3 replicas are ready", og=GEN)]},
            "condition Progressing is True, want False (reason Progressing: Rollout in progress")],
        bump={"replicas": 5},
        ready={"observedGeneration": GEN, "readyReplicas": 3, "conditions": [
            cond("Available", "True", "Available", "3/3 replicas are ready", og=GEN),
            cond("Progressing", "False", "ProgressingComplete", og=GEN),
            cond("Degraded", "False", "NotDegraded", og=GEN)]}),
    "kvm.cloud.sap/Hypervisor": Case(
        obj("kvm.cloud.sap/v1", "Hypervisor", {"highAvailability": True, "lifecycleEnabled": True}),
        not_ready=[({"conditions": [cond("Ready", "False", "Onboarding", "Onboarding not started: waiting for "
                                         "nova-compute to register the hypervisor in Nova (HypervisorID/ServiceID "
                                         "not yet available)")]}, "reason Onboarding"),
                   ({"hypervisorId": "1", "serviceId": "2", "conditions": [
                       cond("Onboarding", "True", "Testing", "Running onboarding tests"),
                       cond("Ready", "False", "Onboarding", "Onboarding in progress: Running onboarding tests")]},
                    "condition Ready is False (reason Onboarding: Onboarding in progress: Running onboarding tests)")],
        ready={"hypervisorId": "1", "serviceId": "2", "internalIp": "10.250.3.10", "conditions": [
            cond("Onboarding", "False", "Succeeded", "Onboarding completed"),
            cond("Ready", "True", "Ready", "Hypervisor is ready")]}),
    "keystone.openstack.c5c3.io/Keystone": Case(
        obj("keystone.openstack.c5c3.io/v1alpha1", "Keystone", {"bootstrap": {
            "adminPasswordSecretRef": {"name": "keystone-admin-credentials", "key": "password"}}}),
        not_ready=[({"conditions": [cond("BootstrapReady", "False", "BootstrapJobRunning", og=GEN),
                                    cond("Ready", "False", "Bootstrapping", og=GEN)]},
                    "condition Ready is False (reason Bootstrapping)")],
        bump={"replicas": 5},  # 3 is the default: no change
        ready={"conditions": [cond("BootstrapReady", "True", "JobSucceeded", og=GEN),
                              cond("Ready", "True", "Ready", og=GEN)]}),
    "c5c3.io/*": Case(
        obj("c5c3.io/v1alpha1", "ControlPlane", {"global": {"region": "RegionOne"}}),
        not_ready=[({"observedGeneration": GEN, "phase": "Provisioning", "conditions": [
            cond("InfrastructureReady", "False", "WaitingForMariaDB", og=GEN),
            cond("Ready", "False", "InfrastructureNotReady", "waiting for infrastructure", og=GEN)]},
            "condition Ready is False (reason InfrastructureNotReady: waiting for infrastructure)")],
        bump={"cortex": {"enabled": True}},
        ready={"observedGeneration": GEN, "phase": "Ready",
               "conditions": [cond("Ready", "True", "AllPhasesReady", og=GEN)]}),
    "*.c5c3.io/*": Case(
        obj("glance.openstack.c5c3.io/v1alpha1", "Glance", {
            "image": {"repository": "ghcr.io/c5c3/glance", "tag": "31.0.0"},
            "database": {"secretRef": {"name": "glance-db-credentials"}},
            "keystone": {"authUrl": "https://keystone.openstack.svc:5000/v3",
                         "appCredentialRef": {"secretName": "glance-keystone-credentials"}}}),
        not_ready=[({"observedGeneration": GEN, "conditions": [cond("Ready", "False", "DBSyncRunning", og=GEN)]},
                    "condition Ready is False (reason DBSyncRunning)")],
        bump={"replicas": 3},
        ready={"observedGeneration": GEN, "conditions": [cond("Ready", "True", "Ready", og=GEN)]}),

    # --- Kubernetes workloads (on the IronCore cluster, where no deployment/statefulset/daemonset/job controller runs)
    "apps/Deployment": Case(
        obj("apps/v1", "Deployment", {"replicas": 3, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}),
        not_ready=[
            ({"observedGeneration": GEN, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 2,
              "availableReplicas": 2}, "rollout: 1 of 3 new replicas updated"),
            ({"observedGeneration": GEN, "replicas": 4, "updatedReplicas": 3, "readyReplicas": 4,
              "availableReplicas": 4}, "rollout: 1 old replicas pending termination"),
            ({"observedGeneration": GEN, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 2,
              "availableReplicas": 2}, "rollout: 2 of 3 updated replicas available"),
        ],
        bump={"template": NEW_TEMPLATE},
        ready={"observedGeneration": GEN, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
               "availableReplicas": 3, "conditions": [
                   dict(cond("Available", "True", "MinimumReplicasAvailable"), lastUpdateTime=T0),
                   dict(cond("Progressing", "True", "NewReplicaSetAvailable"), lastUpdateTime=T0)]},
        terminal=[({"observedGeneration": GEN, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 3,
                    "availableReplicas": 3, "conditions": [dict(cond(
                        "Progressing", "False", "ProgressDeadlineExceeded",
                        'ReplicaSet "rt-deployment-5d4f" has timed out progressing.'), lastUpdateTime=T1)]},
                   "reason ProgressDeadlineExceeded")],
        timeout=True),
    "apps/StatefulSet": Case(
        obj("apps/v1", "StatefulSet", {"replicas": 3, "serviceName": "rt", "selector": {"matchLabels": LABELS},
                                       "template": TEMPLATE}),
        not_ready=[
            ({"observedGeneration": GEN, "replicas": 3, "readyReplicas": 1, "currentReplicas": 3,
              "updatedReplicas": 3, "currentRevision": "rt-1", "updateRevision": "rt-1"},
             "rollout: 1 of 3 pods ready"),
            ({"observedGeneration": GEN, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
              "currentReplicas": 2, "updatedReplicas": 1, "currentRevision": "rt-1", "updateRevision": "rt-2"},
             "rolling update: 1 of 3 pods at revision rt-2"),
        ],
        bump={"template": NEW_TEMPLATE},
        ready={"observedGeneration": GEN, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
               "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "rt-2", "updateRevision": "rt-2"}),
    "apps/DaemonSet": Case(
        obj("apps/v1", "DaemonSet", {"selector": {"matchLabels": LABELS}, "template": TEMPLATE}),
        not_ready=[
            ({"observedGeneration": GEN, "desiredNumberScheduled": 4, "currentNumberScheduled": 4,
              "numberMisscheduled": 0, "numberReady": 4, "updatedNumberScheduled": 2, "numberAvailable": 4},
             "rollout: 2 of 4 new pods updated"),
            ({"observedGeneration": GEN, "desiredNumberScheduled": 4, "currentNumberScheduled": 4,
              "numberMisscheduled": 0, "numberReady": 3, "updatedNumberScheduled": 4, "numberAvailable": 3,
              "numberUnavailable": 1}, "rollout: 3 of 4 pods available"),
        ],
        bump={"template": NEW_TEMPLATE},
        ready={"observedGeneration": GEN, "desiredNumberScheduled": 4, "currentNumberScheduled": 4,
               "numberMisscheduled": 0, "numberReady": 4, "updatedNumberScheduled": 4, "numberAvailable": 4}),
    "batch/Job": Case(
        obj("batch/v1", "Job", job_spec()),
        not_ready=[({"active": 1, "ready": 0, "startTime": T0},
                    "condition Complete is not True yet (1 active, 0 succeeded, 0 failed)")],
        ready={"succeeded": 1, "active": 0, "ready": 0, "startTime": T0, "completionTime": T1, "conditions": [
            dict(cond("SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
                 lastProbeTime=T1),
            dict(cond("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
                 lastProbeTime=T1)]},
        # A finished Job cannot fail later: the driver fails a second Job.
        terminal=[({"failed": 7, "active": 0, "ready": 0, "startTime": T0, "conditions": [
            dict(cond("FailureTarget", "True", "BackoffLimitExceeded",
                      "Job has reached the specified backoff limit"), lastProbeTime=T1),
            dict(cond("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
                 lastProbeTime=T1)]},
            "condition Failed is True (reason BackoffLimitExceeded: Job has reached the specified backoff limit)")],
        driver="fresh_terminal"),
    "core/Pod": Case(
        obj("v1", "Pod", POD_SPEC),
        not_ready=[
            ({"phase": "Pending", "qosClass": "BestEffort", "conditions": [
                cond("PodScheduled", "False", "Unschedulable", "0/3 nodes are available")]},
             "status.phase is Pending, want Running (and Ready) or Succeeded"),
            ({"phase": "Running", "qosClass": "BestEffort", "observedGeneration": GEN, "conditions": [
                cond("Ready", "False", "ContainersNotReady", "containers with unready status: [app]")]},
             "condition Ready is False (reason ContainersNotReady: containers with unready status: [app])"),
        ],
        # An image update is the one spec change a pod takes; the kubelet reports observedGeneration.
        bump={"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9"}]},
        ready={"phase": "Running", "qosClass": "BestEffort", "observedGeneration": GEN,
               "conditions": [cond("Ready", "True", "PodReady")]},
        terminal=[({"phase": "Failed", "qosClass": "BestEffort", "observedGeneration": GEN, "reason": "Evicted",
                    "message": "low on memory", "conditions": [cond("Ready", "False", "PodFailed")]},
                   "status.phase is Failed (reason Evicted: low on memory)")]),
    "core/PersistentVolumeClaim": Case(
        obj("v1", "PersistentVolumeClaim", {"accessModes": ["ReadWriteOnce"], "storageClassName": "rt-none",
                                            "resources": {"requests": {"storage": "1Gi"}}}),
        not_ready=[({"phase": "Pending"}, "status.phase is Pending, want Bound")],
        ready={"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}},
        terminal=[({"phase": "Lost"}, "status.phase is Lost")]),
    "core/Namespace": Case(obj("v1", "Namespace"), driver="namespace"),
    "core/Service": Case(
        obj("v1", "Service", {"type": "LoadBalancer", "selector": LABELS, "ports": [{"port": 443}]}),
        not_ready=[({"loadBalancer": {}}, "status.loadBalancer.ingress is not assigned yet")],
        ready={"loadBalancer": {"ingress": [{"ip": "192.0.2.10", "ipMode": "VIP"}]}},
        variants=[("ClusterIP", {"type": "ClusterIP", "selector": LABELS, "ports": [{"port": 443}]})],
        hold=True, timeout=True),
    "core/ConfigMap": Case(obj("v1", "ConfigMap", data={"key": "value"}), hold=True),
    "core/Secret": Case(obj("v1", "Secret", stringData={"key": "value"}), hold=True),
    "core/ServiceAccount": Case(obj("v1", "ServiceAccount"), hold=True),
    "rbac.authorization.k8s.io/Role": Case(
        obj("rbac.authorization.k8s.io/v1", "Role",
            rules=[{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]), hold=True),
    "rbac.authorization.k8s.io/RoleBinding": Case(
        obj("rbac.authorization.k8s.io/v1", "RoleBinding",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "rt-role"},
            subjects=[{"kind": "ServiceAccount", "name": "default"}]), hold=True),
    "rbac.authorization.k8s.io/ClusterRole": Case(
        obj("rbac.authorization.k8s.io/v1", "ClusterRole",
            rules=[{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}]), hold=True),
    "rbac.authorization.k8s.io/ClusterRoleBinding": Case(
        obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            subjects=[{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "rt-readers"}]), hold=True),
    "storage.k8s.io/StorageClass": Case(
        obj("storage.k8s.io/v1", "StorageClass", provisioner="rook-ceph.rbd.csi.ceph.com",
            reclaimPolicy="Delete"), hold=True),
    "apiextensions.k8s.io/CustomResourceDefinition": Case(
        obj("apiextensions.k8s.io/v1", "CustomResourceDefinition"), driver="crd"),
}
