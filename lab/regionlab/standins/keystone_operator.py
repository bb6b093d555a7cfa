"""keystone-operator stand-in: a real Keystone per Keystone CR, status as the c5c3 keystone-operator writes it.

Modelled on github.com/c5c3/cobaltcore operators/keystone/internal/controller (keystone_controller.go:
finalizer keystone.openstack.c5c3.io/finalizer, the sub-reconciler order and the aggregate Ready;
reconcile_secrets.go with internal/common/secrets/gate.go, reconcile_fernet.go, reconcile_credential.go,
reconcile_database.go with internal/common/database/flow.go, reconcile_deployment.go,
reconcile_healthcheck.go with internal/common/healthcheck/flow.go, reconcile_bootstrap.go with
internal/common/job/job.go; internal/common/reconcile/status.go) and on seed 003 (conditions,
status.endpoint). Where upstream runs Jobs and a Deployment, the lab runs keystone-manage and
Keystone's API server itself (keystones.py): the same steps, the same condition types and reasons;
messages are upstream's where they describe the lab truthfully, and name the lab's own process or
command where upstream's would name a Job, a Secret or a CronJob that the lab does not have.

Conditions, each with observedGeneration (upstream order; a step's condition appears once the
steps before it are done, as upstream's short-circuiting pipeline does):
  SecretsReady                           the Secrets the CR names exist with upstream's keys (the
                                         database's username and password, the admin's password)
                                         and a named secret store is Ready; nothing after this
                                         step runs until it holds (secrets_verdict)
  FernetKeysReady, CredentialKeysReady   the Secrets <name>-fernet-keys and <name>-credential-keys
                                         (GeneratingKeys in the pass that creates them), their staging
                                         Secrets, rotation CronJobs and RBAC; <Kind>KeysRotated in the
                                         pass that applies a staged rotation, else <Kind>KeysAvailable
                                         (key_rotation.py: the rotation pods' container is played there)
  DatabaseReady                          keystone-manage db_sync; on a new spec.image.tag the upgrade
                                         flow of upstream's internal/common/database/upgrade.go: db_sync
                                         --expand (Expanding), --migrate (Migrating), the API server's
                                         rolling update (RollingUpdate), --contract (Contracting), each
                                         reported as <Phase>InProgress / <Phase>Failed, then
                                         status.installedRelease is the tag; a lower major version is
                                         DowngradeNotSupported; the installed tag again aborts
                                         the upgrade, a third tag is UpgradeTargetChanged
  DeploymentReady, KeystoneAPIReady      the API server running and answering GET <endpoint>
  BootstrapReady                         keystone-manage bootstrap, again whenever the admin password
                                         changes (upstream re-runs the <name>-bootstrap Job when the
                                         digest of the password changes; the lab stamps the same
                                         digest as annotation forge.c5c3.io/admin-password-hash on
                                         the Keystone CR, since it has no Job to stamp it on)
  Ready                                  AllReady when all of the above are True, else NotAllReady
plus status.observedGeneration and status.endpoint (http://127.0.0.1:<port>/v3, set once the
Keystone first answered, as upstream sets it once the Deployment is available).

Left alone: Keystone CRs whose status another field manager writes (a test playing the operator
itself); nothing happens to a new CR before the `keystone` delay has passed, so such a test's
first status write comes first. The finalizer is still removed on deletion.
"""

import base64
import copy
import hashlib
import threading
import time

from .. import config, kubelets, processes
from . import deployments, key_rotation, keystones, loop, operators
from .client import ApiError, Kube, Waker, object_path, path

GV = "keystone.openstack.c5c3.io/v1alpha1"
MANAGER = "lab-keystone-operator"
OPERATOR = "keystone-operator"   # its Deployment (deployments.py)
NAME = "keystone-operator-standin"
FINALIZER = "keystone.openstack.c5c3.io/finalizer"
PASSWORD_HASH = "forge.c5c3.io/admin-password-hash"

SUB_CONDITIONS = ["SecretsReady", "FernetKeysReady", "CredentialKeysReady", "DatabaseReady", "DeploymentReady",
                  "KeystoneAPIReady", "BootstrapReady"]
# Upstream's credential gates (reconcile_secrets.go): where the CR names the Secret, the keys it must hold,
# the condition's reason, the noun of its messages and the message while ESO has not synced it yet.
CREDENTIAL_GATES = (
    (("database", "secretRef"), ("username", "password"), "WaitingForDBCredentials", "Database credentials",
     "Waiting for ESO to sync database credentials from OpenBao"),
    (("bootstrap", "adminPasswordSecretRef"), ("password",), "WaitingForAdminCredentials", "Admin credentials",
     "Waiting for ESO to sync admin credentials from OpenBao"),
)
ESO_GV = "external-secrets.io/v1"
# Upstream's bootstrap Job: backoffLimit 4, i.e. five attempts, then permanently failed until the
# admin password changes. The lab waits 1, 2, 4, 8 s between attempts (Kubernetes: 10 s doubling; the
# first wait is the Keystone's bootstrap_backoff in standins.yaml).
BOOTSTRAP_ATTEMPTS = 5
# How long the first pass waits for the Keystones it brought back (regionlab up).
FIRST_START_TIMEOUT = 90.0


def _ready(obj):
    """An ExternalSecret's or a secret store's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in ((obj or {}).get("status") or {}).get("conditions") or [])


def secrets_verdict(cr, read):
    """SecretsReady (status, reason, message) as upstream's reconcileSecrets decides it.

    read(kind, namespace, name): the object or None; kind Secret, ExternalSecret, ClusterSecretStore or
    SecretStore. First the secret store (upstream: spec.secretStoreRef, else ClusterSecretStore
    openbao-cluster-store; the lab, which runs no ESO, gates only on a store the CR names), then each
    credential Secret: ready when it holds every key (a key with an empty value counts, as upstream's
    IsSecretReady); else its ExternalSecret of the same name only says why.
    """
    spec, namespace = cr.get("spec") or {}, cr["metadata"]["namespace"]
    store = spec.get("secretStoreRef")
    if store:
        kind = store.get("kind") or "ClusterSecretStore"
        if not _ready(read(kind, None if kind == "ClusterSecretStore" else namespace, store.get("name"))):
            return ("False", "SecretStoreNotReady",
                    '%s "%s" is not ready; upstream secret backend unreachable' % (kind, store.get("name")))
    for (section, field), keys, reason, noun, waiting in CREDENTIAL_GATES:
        name = ((spec.get(section) or {}).get(field) or {}).get("name") or ""
        secret = read("Secret", namespace, name) if name else None
        if secret is not None and all(k in (secret.get("data") or {}) for k in keys):
            continue
        external = read("ExternalSecret", namespace, name) if name else None
        if external is None:
            message = "%s ExternalSecret %s/%s not found yet" % (noun, namespace, name)
        elif _ready(external):  # synced, yet the Secret lacks a key
            message = "%s Secret exists but is missing expected keys" % noun
        else:
            message = waiting
        return ("False", reason, message)
    return ("True", "SecretsAvailable", "")


def _tail(text, limit=400):
    """The last lines of a command's stderr that say something, on one line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return " | ".join(lines[-2:])[-limit:] if lines else "no output"


class Job:
    """keystone-manage commands run side by side in a thread, as the operator's Jobs run in pods."""

    def __init__(self, kind, commands, wake, **info):
        self.kind, self.info = kind, info
        self.results = {}
        self.done = False
        self.procs = []
        self._commands = commands
        self._wake = wake
        self._cancelled = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            started = []
            for label, start in self._commands:
                if not self._cancelled:
                    proc, errors = start()
                    self.procs.append((label, proc))
                    started.append((label, proc, errors))
            for label, proc, errors in started:
                proc.wait()
                errors.seek(0)
                self.results[label] = (proc.returncode, _tail(errors.read().decode(errors="replace")))
                errors.close()
        except OSError as exc:
            for label, _ in self._commands:
                self.results.setdefault(label, (-1, str(exc)))
        self.done = True
        self._wake.set()

    def running(self, label):
        return not self.done and any(lbl == label for lbl, _ in self._commands)

    def cancel(self):
        self._cancelled = True
        for _, proc in self.procs:
            if proc.poll() is None:
                proc.kill()


# Upstream's upgrade phases (internal/common/database/upgrade.go) and the keystone-manage each runs in the lab.
UPGRADE_PHASES = (("Expanding", ("db_sync", "--expand")), ("Migrating", ("db_sync", "--migrate")),
                  ("RollingUpdate", ("rolling-update",)), ("Contracting", ("db_sync", "--contract")))
UPGRADE_REASONS = {"Expanding": "Expand", "Migrating": "Migrate", "RollingUpdate": "UpgradeRollingUpdate",
                   "Contracting": "Contract"}


def upgrade_condition(upgrade):
    """DatabaseReady's (reason, message) while an upgrade runs, failed or was refused (upstream's reasons)."""
    span = "%s -> %s" % (upgrade["from"], upgrade["tag"])
    if upgrade.get("refused"):
        return "DowngradeNotSupported", "downgrade from %s to %s is not supported" % (upgrade["from"], upgrade["tag"])
    if upgrade.get("target_changed"):
        return "UpgradeTargetChanged", "upgrade target changed from %s to %s during %s" % (
            upgrade["tag"], upgrade["target_changed"], upgrade["phase"])
    stem = UPGRADE_REASONS[upgrade["phase"]]
    if upgrade["error"]:
        return ("%sFailed" % stem if stem != "UpgradeRollingUpdate" else "UpgradeRollingUpdateFailed",
                "%s phase failed (%s): %s" % (upgrade["phase"], span, upgrade["error"]))
    return (stem if stem == "UpgradeRollingUpdate" else "%sInProgress" % stem,
            "%s phase running: %s" % (upgrade["phase"], span))


def release_status(tracker):
    """status.installedRelease, targetRelease and upgradePhase."""
    installed = tracker.instance.state().get("installed_release")
    upgrade = tracker.upgrade
    if not installed:
        return {}
    running = upgrade and not upgrade.get("refused")
    # upstream's omitempty: an empty field is absent, and a merge patch's null removes it
    return {"installedRelease": installed, "targetRelease": upgrade["tag"] if upgrade else None,
            "upgradePhase": upgrade["phase"] if running else None}


class Tracker:
    """What the stand-in knows about one CR's Keystone between passes."""

    def __init__(self, instance, endpoint):
        self.instance = instance
        self.job = None
        self.generated = []               # key repositories created in this pass
        self.db_error = None
        self.db_failures = 0
        self.db_retry_at = 0.0
        self.started = instance.running()  # a process we run (or found running) that should be up
        self.exits = 0
        self.exit_detail = None
        self.start_at = 0.0
        self.healthy = False
        self.probe_reason = "ConnectionFailed"
        self.probe_detail = None
        self.healthy_since = None
        self.endpoint = endpoint if endpoint == instance.url else None
        self.boot_digest = None           # the password digest of the current attempts
        self.boot_attempts = 0
        self.boot_retry_at = 0.0
        self.boot_error = None
        self.boot = ("pending",)
        self.upgrade = None               # {"tag", "phase", "error"} while a new image tag is rolled out
        self.rotated = []                 # key kinds whose staged rotation was applied in this pass
        self.containers = {}              # pod uid -> key_rotation.Container: the rotation pods' scripts
        self.applied = {}                 # (plural, name, namespace) -> the manifest last applied
        self.projected = {}               # key kind -> resourceVersion of the Secret last projected
        self.rejected = set()             # staging Secret resourceVersions already judged


class KeystoneOperator(loop.Controller):
    name = NAME

    def __init__(self, cluster):
        super().__init__()
        self.kube = Kube(cluster, MANAGER)
        self.trackers = {}
        self.registry = keystones.read_registry()
        self.first = True
        # It acts while its Deployment is Available; the Keystones it started serve on without it.
        self.running = deployments.Operators(self.kube, self.log)
        self.pods = []
        Waker(cluster, [path(GV, "keystones"), path("v1", "secrets"), path("v1", "pods"),
                        path("batch/v1", "cronjobs"), deployments.DEPLOYMENTS], self.wake, loop.log)

    # Pass ----------------------------------------------------------------------

    def reconcile(self):
        items = self.kube.list(path(GV, "keystones"))
        live = {"%s/%s" % (o["metadata"]["namespace"], o["metadata"]["name"]): o for o in items}
        if self.first:
            self.first = False
            self.bring_back(live)
        self.running.refresh()
        if self.running.runs(OPERATOR):
            self.pods = self.kube.list(path("v1", "pods"))
            for key in sorted(live):
                self.reconcile_keystone(live[key])
        for key in [k for k, entry in self.registry.items()
                    if k not in live or live[k]["metadata"]["uid"] != entry["uid"]]:
            self.teardown(key)
        self.stop_strays()
        uids = {o["metadata"]["uid"] for o in items}
        for uid in [u for u in self.trackers if u not in uids]:
            del self.trackers[uid]
        self.prune(uids)

    def bring_back(self, live):
        """First pass: start the Keystones of the CRs we kept (after `regionlab down`/`up`) and wait
        until they answer (or die), so that `regionlab up` returns with them and no status blinks."""
        waiting = []
        for key, entry in sorted(self.registry.items()):
            cr = live.get(key)
            if (cr is None or cr["metadata"]["uid"] != entry["uid"] or cr["metadata"].get("deletionTimestamp")
                    or loop.foreign(cr, MANAGER)):
                continue
            inst = keystones.Instance(cr["metadata"]["namespace"], cr["metadata"]["name"], entry["port"])
            if inst.state().get("db_synced") and not inst.running():
                fail = bool(self.settings.get().keystone(inst.namespace, inst.name).get("fail_start"))
                inst.start(cr.get("spec"), fail=fail)
                self.log("Keystone %s: API server started again on %s" % (key, inst.url))
                waiting.append(inst)
        deadline = time.monotonic() + FIRST_START_TIMEOUT
        while waiting and time.monotonic() < deadline:
            time.sleep(0.3)
            waiting = [i for i in waiting if i.running() and not keystones.probe(i.url, 1.0)[0]]

    def stop_strays(self):
        """Keystone processes of no registered CR (the CR went while the stand-in was away)."""
        for name in processes.running():
            prefix = next((p for p in (keystones.PREFIX, keystones.CACHE_PREFIX) if name.startswith(p)), None)
            if prefix:
                namespace, _, cr_name = name[len(prefix):].partition(".")
                if "%s/%s" % (namespace, cr_name) not in self.registry:
                    processes.stop(name)
                    self.log("stopped stray %s" % name)

    def teardown(self, key):
        """Stop a CR's Keystone, remove its data and give its port back."""
        namespace, name = key.split("/", 1)
        entry = self.registry.pop(key, None)
        for uid, tracker in list(self.trackers.items()):
            inst = tracker.instance
            if (inst.namespace, inst.name) == (namespace, name):
                if tracker.job:
                    tracker.job.cancel()
                del self.trackers[uid]
        if entry is None:
            return
        inst = keystones.Instance(namespace, name, entry["port"])
        inst.stop()
        inst.remove()
        keystones.write_registry(self.registry)
        self.log("Keystone %s: stopped, data removed, port %d free" % (key, entry["port"]))

    # One CR --------------------------------------------------------------------------

    def reconcile_keystone(self, cr):
        meta = cr["metadata"]
        key = "%s/%s" % (meta["namespace"], meta["name"])
        url = object_path(GV, "keystones", cr)
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            if FINALIZER in finalizers:
                self.teardown(key)
                remaining = [f for f in finalizers if f != FINALIZER]
                self.kube.patch(url, cr, {"metadata": {"finalizers": remaining or None}})
                self.log("Keystone %s: finalizer removed" % key)
            return
        if loop.foreign(cr, MANAGER):
            return
        # A new CR waits for the `keystone` delay; one that carries our finalizer was ours already.
        if FINALIZER not in finalizers and not self.after((meta["uid"], "seen"), self.delay("keystone")):
            return
        if FINALIZER not in finalizers:
            self.kube.patch(url, cr, {"metadata": {"finalizers": finalizers + [FINALIZER]}})
            return
        # Upstream's first step: nothing else runs (no keys, no db_sync, no bootstrap) until the Secrets
        # are there; a Keystone that runs already keeps running, as its pods would.
        verdict = secrets_verdict(cr, self.read)
        if verdict[0] != "True":
            conditions = copy.deepcopy((cr.get("status") or {}).get("conditions") or [])
            loop.set_condition(conditions, "SecretsReady", *verdict, observed_generation=meta.get("generation"))
            self.write_status(cr, self.aggregate(conditions, meta.get("generation")), None)
            return
        tracker = self.tracker_for(cr)
        if tracker is None:
            conditions = copy.deepcopy((cr.get("status") or {}).get("conditions") or [])
            ports = config.KEYSTONE_CR_PORTS
            loop.set_condition(conditions, "SecretsReady", *verdict, observed_generation=meta.get("generation"))
            loop.set_condition(conditions, "DeploymentReady", "False", "WaitingForDeployment",
                               "Keystone API deployment is not yet available: no free lab port in %d-%d"
                               % (ports[0], ports[-1]), meta.get("generation"))
            self.write_status(cr, self.aggregate(conditions, meta.get("generation")), None)
            return
        self.drive(tracker, cr)
        if tracker.boot[0] == "complete":  # the digest first, so that it is there once BootstrapReady is True
            digest = tracker.boot[1]
            if (meta.get("annotations") or {}).get(PASSWORD_HASH) != digest:
                cr = self.kube.patch(url, cr, {"metadata": {"annotations": {PASSWORD_HASH: digest}}})
                if cr is None:
                    return  # changed meanwhile: the next pass decides again
        conditions, endpoint = self.conditions(tracker, cr)
        self.write_status(cr, conditions, endpoint, release_status(tracker))

    def read(self, kind, namespace, name):
        """One object secrets_verdict asks for (None when absent, or its kind is not served: no ESO CRDs)."""
        if kind == "Secret":
            return self.kube.get(path("v1", "secrets", namespace, name))
        plural = {"ExternalSecret": "externalsecrets", "SecretStore": "secretstores",
                  "ClusterSecretStore": "clustersecretstores"}[kind]
        return self.kube.get(path(ESO_GV, plural, namespace, name))

    def tracker_for(self, cr):
        meta, spec = cr["metadata"], cr.get("spec") or {}
        key = "%s/%s" % (meta["namespace"], meta["name"])
        entry = self.registry.get(key)
        if entry and entry["uid"] != meta["uid"]:
            self.teardown(key)
            entry = None
        if entry is None:
            port = keystones.free_port(self.registry)
            if port is None:
                return None
            entry = self.registry[key] = {"port": port, "uid": meta["uid"]}
            keystones.write_registry(self.registry)
            self.log("Keystone %s: port %d" % (key, port))
        tracker = self.trackers.get(meta["uid"])
        max_keys = max(3, int((spec.get("fernet") or {}).get("maxActiveKeys") or 3))
        if tracker is None:
            inst = keystones.Instance(meta["namespace"], meta["name"], entry["port"])
            inst.prepare(meta["uid"], max_keys)
            tracker = self.trackers[meta["uid"]] = Tracker(inst, (cr.get("status") or {}).get("endpoint"))
        else:
            tracker.instance.prepare(meta["uid"], max_keys)
        return tracker

    # What runs ------------------------------------------------------------------------

    def finish_job(self, tracker):
        job, inst = tracker.job, tracker.instance
        tracker.job = None
        now = time.monotonic()
        if job.kind == "db_sync":
            code, detail = job.results.get("db_sync", (-1, "not run"))
            if code == 0:
                inst.db.chmod(0o600)  # it holds the password hashes
                inst.save_state(db_synced=True)
                tracker.db_error, tracker.db_failures = None, 0
            else:
                tracker.db_error = detail
                tracker.db_failures += 1
                tracker.db_retry_at = now + min(60, 2 ** tracker.db_failures)
                self.log("Keystone %s/%s: db_sync failed: %s" % (inst.namespace, inst.name, detail))
        elif job.kind == "upgrade":
            code, detail = job.results.get(job.info["phase"], (-1, "not run"))
            if code != 0:
                tracker.upgrade["error"] = detail
                self.log("Keystone %s/%s: upgrade %s failed: %s" % (inst.namespace, inst.name, job.info["phase"], detail))
            else:
                self.next_upgrade_phase(tracker)
        elif job.kind == "bootstrap":
            code, detail = job.results.get("bootstrap", (-1, "not run"))
            if code == 0:
                inst.save_state(bootstrap_digest=job.info["digest"])
                tracker.boot_attempts, tracker.boot_error = 0, None
                self.log("Keystone %s/%s: bootstrap done" % (inst.namespace, inst.name))
            else:
                tracker.boot_error = detail
                backoff = float(self.settings.get().keystone(inst.namespace, inst.name).get("bootstrap_backoff", 1.0))
                tracker.boot_retry_at = now + backoff * 2 ** (tracker.boot_attempts - 1)
                self.log("Keystone %s/%s: bootstrap attempt %d failed: %s"
                         % (inst.namespace, inst.name, tracker.boot_attempts, detail))

    def drive(self, tracker, cr):
        inst = tracker.instance
        if tracker.job and tracker.job.done:
            self.finish_job(tracker)
        now = time.monotonic()
        # The key Secrets (upstream: generated by the operator itself; the condition says
        # GeneratingKeys in that pass, which requeues), their rotation, and the kubelet's projection.
        tracker.generated, tracker.rotated = [], []
        for kind in key_rotation.KINDS:
            self.reconcile_keys(tracker, cr, kind)
        if tracker.generated or tracker.rotated:
            self.next_due = min(self.next_due, 0.2)
            return
        self.play_rotation_pods(tracker, cr)
        # The database: keystone-manage db_sync (upstream: the <name>-db-sync Job).
        if not inst.state().get("db_synced") and tracker.job is None:
            if now >= tracker.db_retry_at:
                tracker.job = Job("db_sync", [("db_sync", lambda: inst.manage("db_sync"))], self.wake)
            else:
                self.next_due = min(self.next_due, tracker.db_retry_at - now)
        # The API server starts alongside db_sync (it needs no tables to load); its conditions are only
        # reported once the database is synced, as upstream's Deployment step follows Database.
        self.run_deployment(tracker, cr, now)
        if inst.state().get("db_synced"):
            self.run_upgrade(tracker, cr)
            self.run_bootstrap(tracker, cr, now)

    # Keys -------------------------------------------------------------------------------

    def reconcile_keys(self, tracker, cr, kind):
        """reconcile<Kind>Keys: the Secret, the staging Secret and its apply, RBAC, the CronJob."""
        meta, spec = cr["metadata"], cr.get("spec") or {}
        namespace, name = meta["namespace"], meta["name"]
        inst = tracker.instance
        directory = inst.fernet_keys if kind == "fernet" else inst.credential_keys
        secrets_path = path("v1", "secrets", namespace)
        production = self.kube.get(path("v1", "secrets", namespace, key_rotation.keys_secret(name, kind)))
        if production is None:
            # A Keystone of this lab made before its Secrets existed keeps its keys.
            data = (key_rotation.repository_data(directory)
                    or key_rotation.generated_data(key_rotation.max_active_keys(spec, kind)))
            self.kube.create(secrets_path, key_rotation.keys_secret_manifest(cr, kind, data))
            loop.event(self.kube, cr, "%sKeysGenerated" % key_rotation.TITLE[kind],
                       "Initial %s encryption keys have been generated" % ("Fernet" if kind == "fernet" else kind),
                       component="keystone-controller")
            tracker.generated.append(kind)
            return
        staging_name = key_rotation.staging_secret(name, kind)
        staging = self.kube.get(path("v1", "secrets", namespace, staging_name))
        if staging is None:
            staging = self.kube.create(secrets_path, key_rotation.staging_manifest(cr, kind))
        if staging is not None and self.apply_staged(tracker, cr, kind, staging, production):
            tracker.rotated.append(kind)
            return
        # The kubelet's projection, once per version of the Secret (a new stand-in process projects it again).
        version = production["metadata"]["resourceVersion"]
        if tracker.projected.get(kind) != version:
            if key_rotation.project(production.get("data"), directory):
                self.log("Keystone %s/%s: %s keys projected (%s)"
                         % (namespace, name, kind, key_rotation.digest(production.get("data"))))
            tracker.projected[kind] = version
        for api_version, plural, manifest in key_rotation.rbac_manifests(cr, kind):
            self.ensure(tracker, api_version, plural, manifest)
        cronjob = key_rotation.cronjob_manifest(cr, kind, NAME)
        live = self.kube.get(path("batch/v1", "cronjobs", namespace, cronjob["metadata"]["name"]))
        changed = live is None or any(live["spec"].get(k) != v for k, v in cronjob["spec"].items() if k != "jobTemplate")
        self.ensure(tracker, "batch/v1", "cronjobs", cronjob, force=changed)

    def ensure(self, tracker, api_version, plural, manifest, force=False):
        """Server-side apply of one owned object, when it differs from what this process applied last."""
        key = (plural, manifest["metadata"]["name"], manifest["metadata"]["namespace"])
        if not force and tracker.applied.get(key) == manifest:
            return
        self.kube.apply(path(api_version, plural, manifest["metadata"]["namespace"], manifest["metadata"]["name"]),
                        manifest)
        tracker.applied[key] = manifest

    def apply_staged(self, tracker, cr, kind, staging, production):
        """CommitStaged: a completed, valid staged rotation onto the production Secret; True when applied."""
        value, when = key_rotation.completed_at(staging)
        if value is None:
            return False
        smeta = staging["metadata"]
        if when is None:
            if smeta["resourceVersion"] not in tracker.rejected:
                tracker.rejected.add(smeta["resourceVersion"])
                loop.event(self.kube, cr, "RotationAnnotationInvalid",
                           "staging secret %s has malformed %s annotation: %r"
                           % (smeta["name"], key_rotation.COMPLETED_AT, value), "Warning", "keystone-controller")
            return False
        maximum = key_rotation.max_active_keys(cr.get("spec") or {}, kind) + 1
        error = key_rotation.validation_error(staging.get("data"), key_rotation.MIN_KEYS, maximum)
        if error:
            loop.event(self.kube, cr, "RotationRejected", "staging secret %s rejected: %s" % (smeta["name"], error),
                       "Warning", "keystone-controller")
            annotations = {k: v for k, v in (smeta.get("annotations") or {}).items() if k != key_rotation.COMPLETED_AT}
            self.kube.request("PUT", object_path("v1", "secrets", staging),
                              dict(staging, data=None, metadata=dict(smeta, annotations=annotations)),
                              params={"fieldManager": MANAGER})
            self.log("Keystone %s/%s: staged %s rotation rejected: %s"
                     % (cr["metadata"]["namespace"], cr["metadata"]["name"], kind, error))
            return False
        data = staging.get("data") or {}
        pmeta = production["metadata"]
        committed = (production.get("data") or {}) == data and \
            (pmeta.get("annotations") or {}).get(key_rotation.COMPLETED_AT) == value
        if not committed:
            annotations = dict(pmeta.get("annotations") or {}, **{key_rotation.COMPLETED_AT: value})
            self.kube.request("PUT", object_path("v1", "secrets", production),
                              dict(production, data=data, metadata=dict(pmeta, annotations=annotations)),
                              params={"fieldManager": MANAGER})
        try:
            self.kube.request("DELETE", object_path("v1", "secrets", staging), {
                "kind": "DeleteOptions", "apiVersion": "v1",
                "preconditions": {"uid": smeta["uid"], "resourceVersion": smeta["resourceVersion"]}})
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise
        if committed:
            return False
        loop.event(self.kube, cr, "%sKeysRotated" % key_rotation.TITLE[kind],
                   "rotation applied from staging secret %s (%d active keys)" % (smeta["name"], len(data)),
                   component="keystone-controller")
        self.log("Keystone %s/%s: %s rotation applied (%s)"
                 % (cr["metadata"]["namespace"], cr["metadata"]["name"], kind, key_rotation.digest(data)))
        return True

    def play_rotation_pods(self, tracker, cr):
        """The container of each Running rotation pod of this Keystone (key_rotation.Container), then its exit."""
        meta = cr["metadata"]
        components = {key_rotation.component(kind): kind for kind in key_rotation.KINDS}
        seen = set()
        for pod in self.pods:
            pmeta = pod["metadata"]
            pod_labels, notes = pmeta.get("labels") or {}, pmeta.get("annotations") or {}
            kind = components.get(pod_labels.get("app.kubernetes.io/component"))
            if (kind is None or pmeta["namespace"] != meta["namespace"]
                    or pod_labels.get("app.kubernetes.io/instance") != meta["name"]
                    or notes.get(key_rotation.PLAYED_BY) != NAME or pmeta.get("deletionTimestamp")
                    or (pod.get("status") or {}).get("phase") != "Running"
                    or key_rotation.EXIT_CODE in notes or key_rotation.KWOK_FAILED in pod_labels):
                continue
            seen.add(pmeta["uid"])
            container = tracker.containers.get(pmeta["uid"])
            if container is None:
                self.start_container(tracker, cr, kind, pmeta)
            elif container.done:
                self.exit_container(pod, container)
        for uid in [u for u in tracker.containers if u not in seen and tracker.containers[u].done]:
            del tracker.containers[uid]

    def start_container(self, tracker, cr, kind, pod_meta):
        meta, inst = cr["metadata"], tracker.instance
        namespace, name = meta["namespace"], meta["name"]
        production = self.kube.get(path("v1", "secrets", namespace, key_rotation.keys_secret(name, kind))) or {}
        staging_path = path("v1", "secrets", namespace, key_rotation.staging_secret(name, kind))
        settings = self.settings.get().keystone(namespace, name)
        failure = ("fail" if settings.get("fail_rotation") == kind
                   else "reject" if settings.get("reject_rotation") == kind else None)

        def patch_staging(body):
            self.kube.request("PATCH", staging_path, body, params={"fieldManager": MANAGER},
                              content_type="application/strategic-merge-patch+json")

        tracker.containers[pod_meta["uid"]] = key_rotation.Container(
            inst, kind, production.get("data"), key_rotation.max_active_keys(cr.get("spec") or {}, kind),
            patch_staging, self.wake, failure)
        self.log("Keystone %s/%s: %s rotation pod %s started" % (namespace, name, kind, pod_meta["name"]))

    def exit_container(self, pod, container):
        """The container's exit, for KWOK to play: exit code 0 completes the pod, else KWOK fails it."""
        pmeta = pod["metadata"]
        body = kubelets.exit_patch(container.exit_code, container.message)
        self.kube.request("PATCH", object_path("v1", "pods", pod), body, params={"fieldManager": MANAGER},
                          content_type="application/merge-patch+json")
        self.log("pod %s/%s: container exited %s: %s"
                 % (pmeta["namespace"], pmeta["name"], container.exit_code, container.message))

    # Upgrades -----------------------------------------------------------------------

    def run_upgrade(self, tracker, cr):
        """A new spec.image.tag: expand, migrate, rolling update, contract, one after the other (each a
        keystone-manage db_sync Job upstream); then the tag is the installed release."""
        inst = tracker.instance
        tag = ((cr.get("spec") or {}).get("image") or {}).get("tag")
        installed = inst.state().get("installed_release")
        if installed is None:
            inst.save_state(installed_release=tag)  # the first db_sync installed the tag the CR names
            return
        upgrade = tracker.upgrade
        if upgrade is not None and upgrade["tag"] != tag:
            if tracker.job is not None:
                return  # the running phase's Job finishes first
            if tag == installed:
                tracker.upgrade = None  # reverted to the installed release: upstream aborts from any phase
            else:
                upgrade["target_changed"] = tag  # a third tag: UpgradeTargetChanged until it is one of the two
            return
        if upgrade is not None:
            upgrade.pop("target_changed", None)
        fail_at = self.settings.get().keystone(inst.namespace, inst.name).get("fail_upgrade")
        if upgrade and upgrade["error"] and fail_at != upgrade["phase"]:
            upgrade["error"] = None  # the lab's cause is gone: the phase's Job runs again
        if tag == installed or tracker.job is not None or (upgrade and (upgrade["error"] or upgrade.get("refused"))):
            return
        if upgrade is None:
            upgrade = tracker.upgrade = {"tag": tag, "from": installed, "phase": UPGRADE_PHASES[0][0], "error": None}
            if operators.is_downgrade(installed, tag):
                upgrade["refused"] = True
                return
            self.log("Keystone %s/%s: upgrade %s -> %s" % (inst.namespace, inst.name, installed, tag))
        phase = upgrade["phase"]
        args = dict(UPGRADE_PHASES)[phase]
        if args == ("rolling-update",):
            if tracker.healthy:  # the lab's API server serves the same code: it is the rolled Deployment
                self.next_upgrade_phase(tracker)
            return
        if fail_at == phase:
            args = args + ("--lab-injected-failure",)  # a real keystone-manage that exits non-zero
        tracker.job = Job("upgrade", [(phase, lambda: inst.manage(*args))], self.wake, phase=phase)

    def next_upgrade_phase(self, tracker):
        upgrade, names = tracker.upgrade, [name for name, _ in UPGRADE_PHASES]
        index = names.index(upgrade["phase"]) + 1
        if index < len(names):
            upgrade["phase"] = names[index]
            self.next_due = min(self.next_due, 0.2)
            return
        tracker.instance.save_state(installed_release=upgrade["tag"])
        self.log("Keystone %s/%s: upgraded to %s" % (tracker.instance.namespace, tracker.instance.name, upgrade["tag"]))
        tracker.upgrade = None

    def run_deployment(self, tracker, cr, now):
        inst = tracker.instance
        meta = cr["metadata"]
        if not inst.running():
            tracker.healthy, tracker.healthy_since = False, None
            if tracker.started:  # it ran and exited: crash-looping, as a pod would
                tracker.started = False
                tracker.exits += 1
                tracker.exit_detail = inst.log_tail() or "no log output"
                tracker.start_at = now + min(60, 2 ** tracker.exits)
                self.log("Keystone %s/%s: API server exited (%s)" % (meta["namespace"], meta["name"], tracker.exit_detail))
            if now >= tracker.start_at:
                fail = bool(self.settings.get().keystone(meta["namespace"], meta["name"]).get("fail_start"))
                inst.start(cr.get("spec"), fail=fail)
                tracker.started = True
                self.log("Keystone %s/%s: API server started on %s" % (meta["namespace"], meta["name"], inst.url))
            else:
                self.next_due = min(self.next_due, tracker.start_at - now)
        if inst.running():
            tracker.healthy, tracker.probe_reason, tracker.probe_detail = keystones.probe(inst.url, 1.5)
        else:
            tracker.healthy, tracker.probe_reason = False, "ConnectionFailed"
            tracker.probe_detail = "the API server is not running"
        if tracker.healthy:
            if inst.state().get("db_synced"):  # upstream sets it once the Deployment (after Database) is up
                tracker.endpoint = inst.url
            tracker.healthy_since = tracker.healthy_since or now
            if now - tracker.healthy_since > 60:
                tracker.exits = 0
        else:
            tracker.healthy_since = None
            self.next_due = min(self.next_due, 1.0)

    def run_bootstrap(self, tracker, cr, now):
        meta, spec = cr["metadata"], cr.get("spec") or {}
        inst = tracker.instance
        boot = spec.get("bootstrap") or {}
        ref = boot.get("adminPasswordSecretRef") or {}
        ref = dict(ref, key=ref.get("key") or "password")  # SecretsReady held: the Secret is named
        secret = self.kube.get(path("v1", "secrets", meta["namespace"], ref["name"]))
        raw = ((secret or {}).get("data") or {}).get(ref["key"])
        try:
            password = base64.b64decode(raw).decode() if raw else ""
        except (ValueError, UnicodeDecodeError):
            password = ""
        if not password:
            tracker.boot = ("invalid", meta["namespace"], ref["name"], ref["key"])
            return
        digest = hashlib.sha256(password.encode()).hexdigest()
        if inst.state().get("bootstrap_digest") == digest:
            tracker.boot = ("complete", digest)
            return
        if tracker.job is not None:
            tracker.boot = ("running",)
            return
        if tracker.boot_digest != digest:  # a new password: a new Job, with all its attempts
            tracker.boot_digest, tracker.boot_attempts, tracker.boot_error = digest, 0, None
            tracker.boot_retry_at = 0.0
        if tracker.boot_attempts >= BOOTSTRAP_ATTEMPTS:
            tracker.boot = ("failed", tracker.boot_error)
            return
        tracker.boot = ("running",)
        if now < tracker.boot_retry_at:
            self.next_due = min(self.next_due, tracker.boot_retry_at - now)
            return
        tracker.boot_attempts += 1
        args = inst.bootstrap_args(boot.get("adminUser") or "admin", boot.get("region") or "RegionOne",
                                   boot.get("publicEndpoint"))
        # Injected failure: the real keystone-manage, run without the password, fails on its own.
        failing = self.settings.get().keystone(meta["namespace"], meta["name"]).get("fail_bootstrap")
        env = {} if failing else {"OS_BOOTSTRAP_PASSWORD": password}
        tracker.job = Job("bootstrap", [("bootstrap", lambda: inst.manage(*args, env=env))], self.wake, digest=digest)

    # Status -----------------------------------------------------------------------------

    def conditions(self, tracker, cr):
        meta = cr["metadata"]
        gen = meta.get("generation")
        inst = tracker.instance
        conditions = copy.deepcopy((cr.get("status") or {}).get("conditions") or [])
        job = tracker.job

        def put(ctype, ok, reason, message):
            loop.set_condition(conditions, ctype, "True" if ok else "False", reason, message, gen)

        put("SecretsReady", True, "SecretsAvailable", "")  # reconcile_keystone returned before otherwise

        for kind in key_rotation.KINDS:
            title = key_rotation.TITLE[kind]
            ctype = "%sKeysReady" % title
            if kind in tracker.generated:
                put(ctype, False, "GeneratingKeys", "Initial %s keys have been generated"
                    % ("Fernet" if kind == "fernet" else kind))
            elif kind in tracker.rotated:
                put(ctype, True, "%sKeysRotated" % title, "rotation applied; staging secret cleared")
            else:
                put(ctype, True, "%sKeysAvailable" % title,
                    "%s keys Secret exists and rotation CronJob is configured" % title)
        if tracker.generated or tracker.rotated:
            return self.aggregate(conditions, gen), tracker.endpoint
        synced = inst.state().get("db_synced")
        upgrade = tracker.upgrade
        if synced and upgrade:
            reason, message = upgrade_condition(upgrade)
            put("DatabaseReady", False, reason, message)
        elif synced:
            put("DatabaseReady", True, "DatabaseSynced", "Database schema is up to date")
        elif tracker.db_error and not job:
            put("DatabaseReady", False, "DBSyncFailed", "db_sync job failed: %s" % tracker.db_error)
        else:
            put("DatabaseReady", False, "DBSyncInProgress", "db_sync job is running")
        if not synced:
            return self.aggregate(conditions, gen), tracker.endpoint

        if tracker.healthy:
            put("DeploymentReady", True, "DeploymentReady", "Keystone API deployment is available")
        else:
            message = "Keystone API deployment is not yet available"
            if tracker.exit_detail and tracker.exits:
                message += ("; the API server exited %d time(s), last: %s; see %s"
                            % (tracker.exits, tracker.exit_detail, inst.log))
            put("DeploymentReady", False, "WaitingForDeployment", message)
        if tracker.endpoint is None:
            put("KeystoneAPIReady", False, "EndpointNotReady", "endpoint not yet configured")
        elif tracker.healthy:
            put("KeystoneAPIReady", True, "APIHealthy", "Keystone API is responding at %s" % inst.url)
        elif tracker.probe_reason == "APIUnhealthy":
            put("KeystoneAPIReady", False, "APIUnhealthy", "Keystone API returned %s" % tracker.probe_detail)
        else:
            put("KeystoneAPIReady", False, tracker.probe_reason, "Keystone API at %s is not reachable: %s"
                % (inst.url, tracker.probe_detail))

        boot = tracker.boot
        if boot[0] == "invalid":
            put("BootstrapReady", False, "AdminSecretInvalid",
                'Admin password Secret %s/%s is missing, unreadable, or has an empty "%s" value' % boot[1:])
        elif boot[0] == "complete":
            put("BootstrapReady", True, "BootstrapComplete", "Keystone bootstrap completed successfully")
        elif boot[0] == "failed":
            put("BootstrapReady", False, "BootstrapFailed",
                "Keystone bootstrap job failed: job has permanently failed: %s/%s-bootstrap "
                "(keystone-manage bootstrap, %d attempts, last: %s)"
                % (meta["namespace"], meta["name"], BOOTSTRAP_ATTEMPTS, boot[1]))
        elif boot[0] == "running":
            put("BootstrapReady", False, "BootstrapInProgress", "Keystone bootstrap job is running")
        return self.aggregate(conditions, gen), tracker.endpoint

    def aggregate(self, conditions, gen):
        """SetAggregateReady: Ready is True only when every sub-condition is present and True."""
        ready = all(any(c["type"] == t and c["status"] == "True" for c in conditions) for t in SUB_CONDITIONS)
        if ready:
            loop.set_condition(conditions, "Ready", "True", "AllReady", "All sub-conditions are ready", gen)
        else:
            loop.set_condition(conditions, "Ready", "False", "NotAllReady",
                               "One or more sub-conditions are not ready", gen)
        order = SUB_CONDITIONS + ["Ready"]
        return sorted(conditions, key=lambda c: order.index(c["type"]) if c["type"] in order else len(order))

    def write_status(self, cr, conditions, endpoint, release=None):
        """Patch status when it differs; returns the updated object (None when unchanged or refused)."""
        current = cr.get("status") or {}
        wanted = dict(release or {}, observedGeneration=cr["metadata"].get("generation"), conditions=conditions)
        if endpoint:
            wanted["endpoint"] = endpoint
        if all(current.get(k) == v for k, v in wanted.items()):
            return None
        return self.kube.patch(object_path(GV, "keystones", cr), cr, {"status": wanted}, "status")


def main():
    clusters = config.clusters()
    planes = [c for c in clusters if config.CONTROL_PLANE_GROUP in c.groups]
    if not planes:
        raise SystemExit("inventories/lab has no host in group %s" % config.CONTROL_PLANE_GROUP)
    KeystoneOperator(planes[0]).run()
