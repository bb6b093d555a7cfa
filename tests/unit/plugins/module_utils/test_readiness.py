# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The readiness table, kind by kind, driven through the status values upstream writes."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import sys

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate, Readiness
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness as readiness_module
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError


# ---------------------------------------------------------------------------
# Builders.

def make(api_version, kind, status=None, spec=None, generation=1, name="obj", namespace="ns", **metadata):
    obj = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": dict({"name": name, "generation": generation}, **metadata),
        "spec": spec if spec is not None else {},
    }
    if namespace:
        obj["metadata"]["namespace"] = namespace
    if status is not None:
        obj["status"] = status
    return obj


def cond(ctype, status="True", reason=None, message=None, og=None):
    found = {"type": ctype, "status": status, "lastTransitionTime": "2025-01-01T00:00:00Z"}
    if reason is not None:
        found["reason"] = reason
    if message is not None:
        found["message"] = message
    if og is not None:
        found["observedGeneration"] = og
    return found


def bump(obj):
    """A spec change the controller has not seen yet."""
    changed = copy.deepcopy(obj)
    changed["metadata"]["generation"] = changed["metadata"].get("generation", 1) + 1
    return changed


def catch_up(obj):
    """The controller observed the new generation and wrote the same status for it."""
    caught = copy.deepcopy(obj)
    generation = caught["metadata"]["generation"]
    status = caught.get("status") or {}
    if "observedGeneration" in status:
        status["observedGeneration"] = generation
    for found in status.get("conditions") or []:
        if "observedGeneration" in found:
            found["observedGeneration"] = generation
    return caught


def has_generation_tracking(obj):
    status = obj.get("status") or {}
    return "observedGeneration" in status or any(
        "observedGeneration" in found for found in status.get("conditions") or [])


def mentions(result, needle):
    return any(needle in line for line in result.missing)


# ---------------------------------------------------------------------------
# The kinds, each through its real status values: (label, object, ready, terminal, text in missing).

SHOOT = "core.gardener.cloud/v1beta1"
SHOOT_OK = [cond(ctype) for ctype in readiness_module.SHOOT_CONDITION_TYPES]
METAL = "metal.ironcore.dev/v1alpha1"
ROOK = "ceph.rook.io/v1"
KORC = "openstack.k-orc.cloud/v1alpha1"


def shoot(status, spec=None, generation=1):
    return make(SHOOT, "Shoot", status, spec or {"region": "eu-de-1"}, generation, namespace="garden-eu-de-1")


def last_op(op_type, state, progress=None, description=None):
    found = {"type": op_type, "state": state, "lastUpdateTime": "2025-01-01T00:00:00Z"}
    if progress is not None:
        found["progress"] = progress
    if description is not None:
        found["description"] = description
    return found


def korc(conditions, generation=1, kind="Project"):
    return make(KORC, kind, {"conditions": conditions}, {"managementPolicy": "managed"}, generation)


def rook(kind, status, generation=1):
    return make(ROOK, kind, status, {}, generation, namespace="rook-ceph")


def flux(api_version, kind, conditions, og=1, generation=1, spec=None):
    status = {"conditions": conditions}
    if og is not None:
        status["observedGeneration"] = og
    return make(api_version, kind, status, spec or {"interval": "10m"}, generation)


FLUX_KINDS = [
    ("source.toolkit.fluxcd.io/v1", "HelmRepository"),
    ("source.toolkit.fluxcd.io/v1", "GitRepository"),
    ("source.toolkit.fluxcd.io/v1", "HelmChart"),
    ("source.toolkit.fluxcd.io/v1", "OCIRepository"),
    ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"),
]

CASES = [
    # --- Gardener Shoot
    ("shoot created, no status", shoot(None), False, False, "status is not reported yet"),
    ("shoot creating", shoot({"observedGeneration": 1, "lastOperation": last_op(
        "Create", "Processing", 40, "Waiting until infrastructure is ready")}), False, False,
     "lastOperation Create Processing 40%: Waiting until infrastructure is ready"),
    ("shoot creating, conditions progressing", shoot({"observedGeneration": 1, "conditions": [
        cond("APIServerAvailable", "Progressing", "HealthzRequestFailed", "API server not reachable")],
        "lastOperation": last_op("Create", "Processing", 80)}), False, False,
     "condition APIServerAvailable is Progressing (reason HealthzRequestFailed: API server not reachable)"),
    ("shoot error is retried", shoot({"observedGeneration": 1, "lastOperation": last_op(
        "Create", "Error", 30, "Flow failed"), "lastErrors": [
        {"description": "infrastructure: quota exceeded", "taskID": "deployInfra",
         "codes": ["ERR_INFRA_QUOTA_EXCEEDED"]}]}), False, False,
     "lastErrors: infrastructure: quota exceeded (codes ERR_INFRA_QUOTA_EXCEEDED)"),
    ("shoot created", shoot({"observedGeneration": 1, "conditions": SHOOT_OK,
                             "lastOperation": last_op("Create", "Succeeded", 100)}), True, False, None),
    ("shoot reconciled", shoot({"observedGeneration": 1, "conditions": SHOOT_OK,
                                "lastOperation": last_op("Reconcile", "Succeeded", 100)}), True, False, None),
    ("shoot failed", shoot({"observedGeneration": 1, "conditions": SHOOT_OK, "lastOperation": last_op(
        "Create", "Failed", 30, "Flow failed"), "lastErrors": [{"description": "bad credentials"}]}),
     False, True, "lastErrors: bad credentials"),
    ("shoot failed for an older spec", shoot({"observedGeneration": 1, "lastOperation": last_op(
        "Reconcile", "Failed", 30, "Flow failed")}, generation=2), False, False, "lastOperation Reconcile Failed"),
    ("shoot being migrated", shoot({"observedGeneration": 1, "conditions": SHOOT_OK,
                                    "lastOperation": last_op("Migrate", "Processing", 10)}), False, False,
     "migration not finished"),
    ("shoot being deleted (lastOperation)", shoot({"observedGeneration": 1, "conditions": SHOOT_OK,
                                                   "lastOperation": last_op("Delete", "Processing", 10)}),
     False, False, "being deleted"),
    ("shoot status without conditions or operation", shoot({"observedGeneration": 1}), False, False,
     "no conditions and no lastOperation"),
    ("hibernated shoot with a lagging seed condition", shoot(
        {"observedGeneration": 1, "conditions": SHOOT_OK + [cond("GardenletReady", "Unknown")],
         "lastOperation": last_op("Reconcile", "Succeeded", 100)},
        spec={"region": "eu-de-1", "hibernation": {"enabled": True}}), True, False, None),
    ("awake shoot with a lagging seed condition", shoot(
        {"observedGeneration": 1, "conditions": SHOOT_OK + [cond("GardenletReady", "Unknown")],
         "lastOperation": last_op("Reconcile", "Succeeded", 100)}), False, False, "condition GardenletReady"),

    # --- IronCore BMC
    ("bmc new", make(METAL, "BMC", None, {"bmcSecretRef": {"name": "s"}}, namespace=None), False, False,
     "status is not reported yet"),
    ("bmc pending", make(METAL, "BMC", {"state": "Pending", "conditions": [
        cond("Ready", "False", "ConnectionFailed", "BMC service unavailable")]}, namespace=None), False, False,
     "condition Ready is False (reason ConnectionFailed: BMC service unavailable)"),
    ("bmc error is retried", make(METAL, "BMC", {"state": "Error", "conditions": [
        cond("Ready", "False", "ConnectionFailed", "BMC service unavailable")]}, namespace=None),
     False, False, "status.state is Error, want Enabled"),
    ("bmc refuses the credentials", make(METAL, "BMC", {"conditions": [
        cond("Ready", "False", "AuthenticationFailed", "BMC credentials are invalid")]}, namespace=None),
     False, True, "condition Ready is False (reason AuthenticationFailed: BMC credentials are invalid)"),
    # A rotated password: metal-operator keeps state Enabled and only flips Ready.
    ("bmc enabled, credentials rotated", make(METAL, "BMC", {"state": "Enabled", "conditions": [
        cond("Ready", "False", "AuthenticationFailed", "BMC credentials are invalid")]}, namespace=None),
     False, True, "reason AuthenticationFailed"),
    ("bmc enabled, not connected", make(METAL, "BMC", {"state": "Enabled", "conditions": [
        cond("Ready", "False", "UnknownError", "BMC connection error: timeout")]}, namespace=None),
     False, False, "condition Ready is False (reason UnknownError"),
    ("bmc enabled without Ready", make(METAL, "BMC", {"state": "Enabled"}, namespace=None),
     False, False, "condition Ready is not reported yet"),
    ("bmc enabled", make(METAL, "BMC", {"state": "Enabled", "powerState": "On",
                                        "conditions": [cond("Ready")]}, namespace=None), True, False, None),
    ("bmcsecret exists", make(METAL, "BMCSecret", None, None, namespace=None), True, False, None),

    # --- IronCore Server
    ("server initial", make(METAL, "Server", {"state": "Initial"}, namespace=None), False, False,
     "status.state is Initial, want Available or Reserved"),
    ("server discovery", make(METAL, "Server", {"state": "Discovery", "powerState": "On"}, namespace=None),
     False, False, "status.state is Discovery"),
    ("server available", make(METAL, "Server", {"state": "Available", "powerState": "Off"}, namespace=None),
     True, False, None),
    ("server reserved", make(METAL, "Server", {"state": "Reserved", "powerState": "On"}, namespace=None),
     True, False, None),
    ("server maintenance", make(METAL, "Server", {"state": "Maintenance"}, namespace=None), False, False,
     "status.state is Maintenance"),
    ("server error", make(METAL, "Server", {"state": "Error"}, namespace=None), False, True,
     "status.state is Error"),

    # --- IronCore ServerClaim (lookup-driven cases are below)
    ("serverclaim unbound", make(METAL, "ServerClaim", {"phase": "Unbound"},
                                 {"power": "On", "image": "gardenlinux:1592"}), False, False,
     "status.phase is Unbound, want Bound"),

    # --- ServerBootConfiguration
    ("boot config pending", make(METAL, "ServerBootConfiguration", {"state": "Pending"},
                                 {"serverRef": {"name": "s1"}, "image": "gl"}), False, False,
     "status.state is Pending, want Ready"),
    ("boot config ready", make(METAL, "ServerBootConfiguration", {"state": "Ready"},
                               {"serverRef": {"name": "s1"}, "image": "gl"}), True, False, None),
    ("boot config error", make(METAL, "ServerBootConfiguration", {"state": "Error", "conditions": [
        cond("ImageValidation", "False", "ValidationFailed", "registry docker.io is not in the allowed list",
             og=1)]}, {"serverRef": {"name": "s1"}, "image": "docker.io/gl"}), False, True,
     "condition ImageValidation is False (reason ValidationFailed: registry docker.io is not in the allowed list)"),

    # --- Rook CephCluster
    ("cephcluster creating", rook("CephCluster", {"phase": "Progressing", "state": "Creating",
                                                  "message": "Configuring Ceph Mons"}), False, False,
     "status.message: Configuring Ceph Mons"),
    ("cephcluster ready", rook("CephCluster", {"phase": "Ready", "state": "Created", "observedGeneration": 1,
                                               "message": "Cluster created successfully",
                                               "ceph": {"health": "HEALTH_OK"}}), True, False, None),
    ("cephcluster ready with warnings", rook("CephCluster", {
        "phase": "Ready", "state": "Created", "observedGeneration": 1,
        "ceph": {"health": "HEALTH_WARN", "details": {"MON_DISK_LOW": {"severity": "HEALTH_WARN"}}}}),
     True, False, None),
    ("cephcluster health error", rook("CephCluster", {
        "phase": "Ready", "state": "Created", "observedGeneration": 1,
        "ceph": {"health": "HEALTH_ERR", "details": {"OSD_FULL": {"severity": "HEALTH_ERR"}}}}), False, False,
     "status.ceph.health is HEALTH_ERR (OSD_FULL)"),
    ("cephcluster health not yet reported", rook("CephCluster", {"phase": "Ready", "state": "Created",
                                                                 "observedGeneration": 1}), False, False,
     "status.ceph.health is not reported yet"),
    ("cephcluster failure is retried", rook("CephCluster", {
        "phase": "Failure", "state": "Error", "message": "failed to start ceph monitors"}), False, False,
     "status.message: failed to start ceph monitors"),
    ("cephcluster external connected", rook("CephCluster", {
        "phase": "Connected", "state": "Connected", "observedGeneration": 1, "ceph": {"health": "HEALTH_OK"}}),
     True, False, None),

    # --- Rook CephObjectStore
    ("objectstore progressing", rook("CephObjectStore", {"phase": "Progressing"}), False, False,
     "status.phase is Progressing, want Ready or Connected"),
    ("objectstore ready", rook("CephObjectStore", {"phase": "Ready", "observedGeneration": 1,
                                                   "info": {"endpoint": "http://rgw:80"}}), True, False, None),
    ("objectstore connected", rook("CephObjectStore", {"phase": "Connected", "observedGeneration": 1}),
     True, False, None),
    ("objectstore failure", rook("CephObjectStore", {"phase": "Failure"}), False, True,
     "status.phase is Failure"),
    ("objectstore rgw health check failing", rook("CephObjectStore", {
        "phase": "Failure", "observedGeneration": 1,
        "bucketStatus": {"health": "Failure", "details": "failed to create bucket"}}), False, False,
     "status.bucketStatus.details: failed to create bucket"),

    # --- Rook CephObjectStoreUser
    ("objectuser new", rook("CephObjectStoreUser", {"phase": ""}), False, False,
     "status.phase is not reported yet, want Ready"),
    ("objectuser store not ready yet", rook("CephObjectStoreUser", {"phase": "ReconcileFailed"}), False, False,
     "status.phase is ReconcileFailed, want Ready"),
    ("objectuser ready", rook("CephObjectStoreUser", {"phase": "Ready", "observedGeneration": 1,
                                                      "info": {"secretName": "rook-ceph-object-user-s-u"}}),
     True, False, None),

    # --- Rook CephRBDMirror
    ("rbdmirror new", rook("CephRBDMirror", {"phase": ""}), False, False, "status.phase is not reported yet"),
    ("rbdmirror ready", rook("CephRBDMirror", {"phase": "Ready", "observedGeneration": 1}), True, False, None),
    ("rbdmirror failed", rook("CephRBDMirror", {"phase": "Failed"}), False, True, "status.phase is Failed"),

    # --- K-ORC (any kind of the group)
    ("korc no status", make(KORC, "Domain", None, {"managementPolicy": "unmanaged"}), False, False,
     "status is not reported yet"),
    ("korc progressing", korc([cond("Available", "False", "Progressing", "Waiting for OpenStack resource", og=1),
                               cond("Progressing", "True", "Progressing", "Waiting for OpenStack resource", og=1)]),
     False, False, "condition Progressing is True (reason Progressing: Waiting for OpenStack resource)"),
    ("korc transient error", korc([cond("Available", "False", "TransientError", "503", og=1),
                                   cond("Progressing", "True", "TransientError", "503", og=1)], kind="Service"),
     False, False, "condition Available is False (reason TransientError: 503)"),
    ("korc available", korc([cond("Available", "True", "Success", "OpenStack resource is available", og=1),
                             cond("Progressing", "False", "Success", "OpenStack resource is up to date", og=1)]),
     True, False, None),
    ("korc available, still updating", korc([cond("Available", "True", "Success", og=1),
                                             cond("Progressing", "True", "Progressing", "Updating", og=1)]),
     False, False, "condition Progressing is True"),
    ("korc invalid configuration", korc([
        cond("Available", "False", "InvalidConfiguration", "filter matched 2 resources", og=1),
        cond("Progressing", "False", "InvalidConfiguration", "filter matched 2 resources", og=1)], kind="Role"),
     False, True, "condition Progressing is False (reason InvalidConfiguration: filter matched 2 resources)"),
    ("korc unrecoverable", korc([cond("Available", "False", "UnrecoverableError", "deleted", og=1),
                                 cond("Progressing", "False", "UnrecoverableError", "deleted", og=1)],
                                kind="ApplicationCredential"), False, True, "reason UnrecoverableError"),
    ("korc terminal for an older generation", korc([
        cond("Available", "False", "InvalidConfiguration", "bad", og=1),
        cond("Progressing", "False", "InvalidConfiguration", "bad", og=1)], generation=2), False, False,
     "condition Available (False) is for generation 1, metadata.generation is 2"),

    # --- mariadb-operator
    ("mariadb provisioning", make("k8s.mariadb.com/v1alpha1", "MariaDB", {"conditions": [
        cond("Ready", "False", "StatefulSetNotReady", "Not ready")]}, {"replicas": 3}), False, False,
     "condition Ready is False (reason StatefulSetNotReady: Not ready)"),
    ("mariadb ready", make("k8s.mariadb.com/v1alpha1", "MariaDB", {"conditions": [
        cond("Ready", "True", "StatefulSetReady", "Running")]}, {"replicas": 3}), True, False, None),
    ("database ready", make("k8s.mariadb.com/v1alpha1", "Database", {"conditions": [
        cond("Ready", "True", "Created", "Created")]}), True, False, None),
    ("database pending", make("k8s.mariadb.com/v1alpha1", "Database", {"conditions": [
        cond("Ready", "False", "MariaDBNotReady", "MariaDB not ready")]}), False, False, "MariaDBNotReady"),
    ("user ready", make("k8s.mariadb.com/v1alpha1", "User", {"conditions": [cond("Ready", "True", "Created")]}),
     True, False, None),
    ("user pending", make("k8s.mariadb.com/v1alpha1", "User", {}), False, False, "status is not reported yet"),
    ("grant ready", make("k8s.mariadb.com/v1alpha1", "Grant", {"conditions": [cond("Ready", "True", "Created")]}),
     True, False, None),
    ("grant failing", make("k8s.mariadb.com/v1alpha1", "Grant", {"conditions": [
        cond("Ready", "False", "Failed", "Error creating Grant")]}), False, False, "Error creating Grant"),

    ("backup running", make("k8s.mariadb.com/v1alpha1", "Backup", {"conditions": [
        cond("Complete", "False", "JobRunning", "Running")]}), False, False,
     "condition Complete is False (reason JobRunning: Running)"),
    ("backup waiting for its mariadb", make("k8s.mariadb.com/v1alpha1", "Backup", {"conditions": [
        cond("Complete", "False", "Failed", "MariaDB not ready")]}), False, False, "MariaDB not ready"),
    ("backup complete", make("k8s.mariadb.com/v1alpha1", "Backup", {"conditions": [
        cond("Complete", "True", "JobComplete", "Success")]}), True, False, None),
    # Upstream reports a failed Job as Complete=True too: only the reason tells.
    ("backup failed", make("k8s.mariadb.com/v1alpha1", "Backup", {"conditions": [
        cond("Complete", "True", "JobFailed", "Failed")]}), False, True, "reason JobFailed: Failed"),
    ("scheduled backup scheduled", make("k8s.mariadb.com/v1alpha1", "Backup", {"conditions": [
        cond("Complete", "False", "CronJobScheduled", "Scheduled")]}, {"schedule": {"cron": "0 2 * * *"}}),
     True, False, None),
    ("scheduled backup whose last run failed", make("k8s.mariadb.com/v1alpha1", "Backup", {"conditions": [
        cond("Complete", "False", "CronJobScheduled", "Failed")]}, {"schedule": {"cron": "0 2 * * *"}}),
     False, False, "reason CronJobScheduled: Failed"),
    ("restore complete", make("k8s.mariadb.com/v1alpha1", "Restore", {"conditions": [
        cond("Complete", "True", "JobComplete", "Success")]}), True, False, None),
    ("restore waiting for its backup", make("k8s.mariadb.com/v1alpha1", "Restore", {"conditions": [
        cond("Complete", "False", "Failed", "Backup not complete")]}), False, False, "Backup not complete"),

    # --- openstack-hypervisor-operator
    ("hypervisor onboarding", make("kvm.cloud.sap/v1", "Hypervisor", {"conditions": [
        cond("Onboarding", "True", "Testing", "Running onboarding tests"),
        cond("Ready", "False", "Onboarding", "Onboarding in progress: Running onboarding tests")]},
        {"lifecycleEnabled": True}), False, False,
     "condition Ready is False (reason Onboarding: Onboarding in progress: Running onboarding tests)"),
    ("hypervisor in maintenance", make("kvm.cloud.sap/v1", "Hypervisor", {"conditions": [
        cond("Onboarding", "False", "Succeeded", "Onboarding completed"),
        cond("Ready", "False", "Maintenance", "Hypervisor is in maintenance mode")]},
        {"maintenance": "manual", "maintenanceReason": "firmware"}), False, False, "Maintenance"),
    ("hypervisor ready", make("kvm.cloud.sap/v1", "Hypervisor", {"internalIp": "10.0.0.10", "conditions": [
        cond("Onboarding", "False", "Succeeded", "Onboarding completed"),
        cond("Ready", "True", "Ready", "Hypervisor is ready")]}), True, False, None),

    # --- RabbitMQ
    ("rabbitmq creating", make("rabbitmq.com/v1beta1", "RabbitmqCluster", {"observedGeneration": 1, "conditions": [
        cond("AllReplicasReady", "False", "NotAllPodsReady", "1/3 Pods ready"),
        cond("ClusterAvailable", "False", "EndpointsNotReady", "Could not find an available endpoint"),
        cond("NoWarnings", "True", "NoWarnings"),
        cond("ReconcileSuccess", "True", "Success", "Finish reconciling")]}, {"replicas": 3}), False, False,
     "condition AllReplicasReady is False (reason NotAllPodsReady: 1/3 Pods ready)"),
    ("rabbitmq ready", make("rabbitmq.com/v1beta1", "RabbitmqCluster", {"observedGeneration": 1, "conditions": [
        cond("AllReplicasReady", "True", "AllPodsAreReady"), cond("ClusterAvailable", "True", "AtLeastOneEndpointAvailable"),
        cond("NoWarnings", "True", "NoWarnings"), cond("ReconcileSuccess", "True", "Success")]}, {"replicas": 3}),
     True, False, None),
    ("rabbitmq reconcile failing is retried", make("rabbitmq.com/v1beta1", "RabbitmqCluster", {
        "observedGeneration": 1, "conditions": [
            cond("AllReplicasReady", "True"), cond("ClusterAvailable", "True"),
            cond("ReconcileSuccess", "False", "Error", "failed to update StatefulSet")]}), False, False,
     "condition ReconcileSuccess is False (reason Error: failed to update StatefulSet)"),
    ("rabbitmq user ready", make("rabbitmq.com/v1beta1", "User", {"observedGeneration": 1, "conditions": [
        cond("Ready", "True", "SuccessfulCreateOrUpdate")]}), True, False, None),
    ("rabbitmq user failing", make("rabbitmq.com/v1beta1", "User", {"observedGeneration": 1, "conditions": [
        cond("Ready", "False", "FailedCreateOrUpdate", "cluster not found")]}), False, False, "cluster not found"),
    ("rabbitmq vhost ready", make("rabbitmq.com/v1beta1", "Vhost", {"observedGeneration": 1, "conditions": [
        cond("Ready", "True", "SuccessfulCreateOrUpdate")]}), True, False, None),
    ("rabbitmq vhost without generation", make("rabbitmq.com/v1beta1", "Vhost", {"conditions": [
        cond("Ready", "True", "SuccessfulCreateOrUpdate")]}), False, False,
     "status.observedGeneration is not reported yet"),
    ("rabbitmq permission ready", make("rabbitmq.com/v1beta1", "Permission", {
        "observedGeneration": 1, "conditions": [cond("Ready", "True", "SuccessfulCreateOrUpdate")]}),
     True, False, None),
    ("rabbitmq permission failing", make("rabbitmq.com/v1beta1", "Permission", {
        "observedGeneration": 1, "conditions": [cond("Ready", "False", "FailedCreateOrUpdate")]}), False, False,
     "condition Ready is False"),

    # --- SAP valkey-operator
    ("valkey processing", make("cache.cs.sap.com/v1alpha1", "Valkey", {
        "observedGeneration": 1, "state": "Processing", "conditions": [
            cond("Ready", "False", "Processing", "Waiting for dependents")]}), False, False,
     "status.state is Processing, want Ready"),
    ("valkey ready", make("cache.cs.sap.com/v1alpha1", "Valkey", {
        "observedGeneration": 1, "appliedGeneration": 1, "state": "Ready",
        "conditions": [cond("Ready", "True", "Ready", "Dependents successfully recreated")]}), True, False, None),
    ("valkey error is retried", make("cache.cs.sap.com/v1alpha1", "Valkey", {
        "observedGeneration": 1, "state": "Error", "conditions": [
            cond("Ready", "False", "Error", "timeout waiting for statefulset")]}), False, False,
     "condition Ready is False (reason Error: timeout waiting for statefulset)"),

    # --- c5c3
    ("memcached rolling out", make("memcached.c5c3.io/v1beta1", "Memcached", {
        "observedGeneration": 1, "readyReplicas": 0, "conditions": [
            cond("Available", "False", "Unavailable", "0/3 replicas are ready", og=1),
            cond("Progressing", "True", "Progressing", "Rollout in progress: 1/3 replicas updated", og=1),
            cond("Degraded", "True", "Degraded", "Only 0/3 replicas are ready", og=1)]}, {"replicas": 3}),
     False, False, "condition Progressing is True, want False (reason Progressing: Rollout in progress"),
    ("memcached ready", make("memcached.c5c3.io/v1beta1", "Memcached", {
        "observedGeneration": 1, "readyReplicas": 3, "conditions": [
            cond("Available", "True", "Available", "3/3 replicas are ready", og=1),
            cond("Progressing", "False", "ProgressingComplete", og=1),
            cond("Degraded", "False", "NotDegraded", og=1)]}, {"replicas": 3}), True, False, None),
    ("memcached missing secret", make("memcached.c5c3.io/v1beta1", "Memcached", {
        "observedGeneration": 1, "conditions": [
            cond("Available", "True", og=1), cond("Progressing", "False", og=1),
            cond("Degraded", "True", "SecretNotFound", "Referenced Secrets not found: tls", og=1)]}), False, False,
     "condition Degraded is True, want False (reason SecretNotFound"),
    ("keystone bootstrapping", make("keystone.openstack.c5c3.io/v1alpha1", "Keystone", {"conditions": [
        cond("BootstrapReady", "False", "BootstrapJobRunning", og=1), cond("Ready", "False", "Bootstrapping", og=1)]}),
     False, False, "condition Ready is False (reason Bootstrapping)"),
    ("keystone ready", make("keystone.openstack.c5c3.io/v1alpha1", "Keystone", {"conditions": [
        cond("BootstrapReady", "True", og=1), cond("Ready", "True", og=1)]}), True, False, None),
    ("controlplane infrastructure phase", make("c5c3.io/v1alpha1", "ControlPlane", {
        "observedGeneration": 1, "conditions": [
            cond("InfrastructureReady", "False", "WaitingForMariaDB", og=1),
            cond("Ready", "False", "InfrastructureNotReady", "waiting for infrastructure", og=1)]}), False, False,
     "condition Ready is False (reason InfrastructureNotReady: waiting for infrastructure)"),
    ("controlplane ready", make("c5c3.io/v1alpha1", "ControlPlane", {"observedGeneration": 1, "conditions": [
        cond("Ready", "True", "AllPhasesReady", og=1)]}), True, False, None),
    ("ovncluster ready (*.c5c3.io)", make("ovn.c5c3.io/v1alpha1", "OVNCluster", {"conditions": [
        cond("Ready", "True", og=1)]}), True, False, None),
    ("glance not ready (*.openstack.c5c3.io)", make("glance.openstack.c5c3.io/v1alpha1", "Glance", {"conditions": [
        cond("Ready", "False", "DBSyncRunning", og=1)]}), False, False, "condition Ready is False (reason DBSyncRunning)"),

    # --- Deployment (kubectl rollout status)
    ("deployment spec not observed", make("apps/v1", "Deployment", {
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}, {"replicas": 3},
        generation=2), False, False, "status.observedGeneration 1 < metadata.generation 2"),
    ("deployment updating", make("apps/v1", "Deployment", {
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "availableReplicas": 2}, {"replicas": 3}),
     False, False, "rollout: 1 of 3 new replicas updated"),
    ("deployment old replicas terminating", make("apps/v1", "Deployment", {
        "observedGeneration": 1, "replicas": 4, "updatedReplicas": 3, "availableReplicas": 3}, {"replicas": 3}),
     False, False, "rollout: 1 old replicas pending termination"),
    ("deployment not yet available", make("apps/v1", "Deployment", {
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 2}, {"replicas": 3}),
     False, False, "rollout: 2 of 3 updated replicas available"),
    ("deployment rolled out", make("apps/v1", "Deployment", {
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
        "conditions": [cond("Available", "True", "MinimumReplicasAvailable"),
                       cond("Progressing", "True", "NewReplicaSetAvailable")]}, {"replicas": 3}), True, False, None),
    ("deployment progress deadline exceeded", make("apps/v1", "Deployment", {
        "observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "conditions": [
            cond("Progressing", "False", "ProgressDeadlineExceeded", 'ReplicaSet "x" has timed out progressing.')]},
        {"replicas": 1}), False, True, "reason ProgressDeadlineExceeded"),

    # --- StatefulSet
    ("statefulset pods not ready", make("apps/v1", "StatefulSet", {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 1, "currentRevision": "r1", "updateRevision": "r1"},
        {"replicas": 3}), False, False, "rollout: 1 of 3 pods ready"),
    ("statefulset rolling update", make("apps/v1", "StatefulSet", {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 1,
        "currentRevision": "r1", "updateRevision": "r2"}, {"replicas": 3}), False, False,
     "rolling update: 1 of 3 pods at revision r2"),
    ("statefulset rolled out", make("apps/v1", "StatefulSet", {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3,
        "currentRevision": "r2", "updateRevision": "r2"}, {"replicas": 3}), True, False, None),
    ("statefulset partitioned rollout", make("apps/v1", "StatefulSet", {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 0,
        "currentRevision": "r1", "updateRevision": "r2"},
        {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}),
     False, False, "partitioned rollout: 0 of 1 new pods updated"),
    ("statefulset partitioned rollout done", make("apps/v1", "StatefulSet", {
        "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 1,
        "currentRevision": "r1", "updateRevision": "r2"},
        {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}),
     True, False, None),
    ("statefulset on delete", make("apps/v1", "StatefulSet", {
        "observedGeneration": 1, "replicas": 2, "readyReplicas": 2, "currentRevision": "r1", "updateRevision": "r2"},
        {"replicas": 2, "updateStrategy": {"type": "OnDelete"}}), True, False, None),

    # --- DaemonSet
    ("daemonset updating", make("apps/v1", "DaemonSet", {
        "observedGeneration": 1, "desiredNumberScheduled": 4, "updatedNumberScheduled": 2, "numberAvailable": 4}),
     False, False, "rollout: 2 of 4 new pods updated"),
    ("daemonset not available", make("apps/v1", "DaemonSet", {
        "observedGeneration": 1, "desiredNumberScheduled": 4, "updatedNumberScheduled": 4, "numberAvailable": 3}),
     False, False, "rollout: 3 of 4 pods available"),
    ("daemonset rolled out", make("apps/v1", "DaemonSet", {
        "observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4,
        "updatedNumberScheduled": 4, "numberAvailable": 4, "numberReady": 4}), True, False, None),
    ("daemonset on delete", make("apps/v1", "DaemonSet", {
        "observedGeneration": 1, "desiredNumberScheduled": 2, "updatedNumberScheduled": 0, "numberAvailable": 2},
        {"updateStrategy": {"type": "OnDelete"}}), True, False, None),

    # --- Job
    ("job running", make("batch/v1", "Job", {"active": 1, "startTime": "2025-01-01T00:00:00Z"}), False, False,
     "condition Complete is not True yet (1 active, 0 succeeded, 0 failed)"),
    ("job complete", make("batch/v1", "Job", {"succeeded": 1, "conditions": [
        cond("SuccessCriteriaMet", "True"), cond("Complete", "True")]}), True, False, None),
    ("job failed", make("batch/v1", "Job", {"failed": 7, "conditions": [
        cond("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")]}),
     False, True, "condition Failed is True (reason BackoffLimitExceeded: Job has reached the specified backoff limit)"),
    ("job failure target", make("batch/v1", "Job", {"failed": 1, "active": 0, "conditions": [
        cond("FailureTarget", "True", "DeadlineExceeded", "Job was active longer than specified deadline")]}),
     False, True, "condition FailureTarget is True (reason DeadlineExceeded"),
    ("job suspended", make("batch/v1", "Job", {"conditions": [cond("Suspended", "True", "JobSuspended")]},
                           {"suspend": True}), False, False, "spec.suspend is true"),

    # --- Pod
    ("pod pending", make("v1", "Pod", {"phase": "Pending", "conditions": [cond("PodScheduled", "False")]}),
     False, False, "status.phase is Pending, want Running (and Ready) or Succeeded"),
    ("pod running, not ready", make("v1", "Pod", {"phase": "Running", "conditions": [
        cond("Ready", "False", "ContainersNotReady", "containers with unready status: [app]")]}), False, False,
     "condition Ready is False (reason ContainersNotReady: containers with unready status: [app])"),
    ("pod ready", make("v1", "Pod", {"phase": "Running", "conditions": [cond("Ready")]}), True, False, None),
    ("pod succeeded", make("v1", "Pod", {"phase": "Succeeded"}), True, False, None),
    ("pod failed", make("v1", "Pod", {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}),
     False, True, "status.phase is Failed (reason Evicted: low on memory)"),

    # --- PersistentVolumeClaim, Namespace
    ("pvc pending", make("v1", "PersistentVolumeClaim", {"phase": "Pending"}), False, False,
     "status.phase is Pending, want Bound"),
    ("pvc bound", make("v1", "PersistentVolumeClaim", {"phase": "Bound", "capacity": {"storage": "1Gi"}}),
     True, False, None),
    ("pvc lost", make("v1", "PersistentVolumeClaim", {"phase": "Lost"}), False, True, "status.phase is Lost"),
    ("namespace active", make("v1", "Namespace", {"phase": "Active"}, namespace=None), True, False, None),
    ("namespace terminating", make("v1", "Namespace", {"phase": "Terminating"}, namespace=None), False, True,
     "status.phase is Terminating"),

    # --- CustomResourceDefinition
    ("crd new", make("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, namespace=None), False, False,
     "status is not reported yet"),
    ("crd installing", make("apiextensions.k8s.io/v1", "CustomResourceDefinition", {"conditions": [
        cond("NamesAccepted", "True", "NoConflicts"), cond("Established", "False", "Installing")]}, namespace=None),
     False, False, "condition Established is False (reason Installing)"),
    ("crd established", make("apiextensions.k8s.io/v1", "CustomResourceDefinition", {"conditions": [
        cond("NamesAccepted", "True", "NoConflicts"), cond("Established", "True", "InitialNamesAccepted")]},
        namespace=None), True, False, None),
    ("crd name conflict", make("apiextensions.k8s.io/v1", "CustomResourceDefinition", {"conditions": [
        cond("NamesAccepted", "False", "MultipleNamesNotAllowed", '"widgets" is already in use')]}, namespace=None),
     False, True, "condition NamesAccepted is False (reason MultipleNamesNotAllowed"),

    # --- Kinds without status
    ("configmap", make("v1", "ConfigMap"), True, False, None),
    ("secret", make("v1", "Secret"), True, False, None),
    ("serviceaccount", make("v1", "ServiceAccount"), True, False, None),
    ("role", make("rbac.authorization.k8s.io/v1", "Role"), True, False, None),
    ("rolebinding", make("rbac.authorization.k8s.io/v1", "RoleBinding"), True, False, None),
    ("clusterrole", make("rbac.authorization.k8s.io/v1", "ClusterRole", namespace=None), True, False, None),
    ("clusterrolebinding", make("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", namespace=None),
     True, False, None),
    ("storageclass", make("storage.k8s.io/v1", "StorageClass", namespace=None), True, False, None),
    ("service clusterip", make("v1", "Service", {"loadBalancer": {}}, {"type": "ClusterIP"}), True, False, None),
    ("service loadbalancer pending", make("v1", "Service", {"loadBalancer": {}}, {"type": "LoadBalancer"}),
     False, False, "status.loadBalancer.ingress is not assigned yet"),
    ("service loadbalancer assigned", make("v1", "Service", {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}},
                                           {"type": "LoadBalancer"}), True, False, None),
    ("helmrepository oci", make("source.toolkit.fluxcd.io/v1", "HelmRepository", None,
                                {"type": "oci", "url": "oci://ghcr.io/c5c3/charts"}), True, False, None),
    ("helmrepository default, no status", make("source.toolkit.fluxcd.io/v1", "HelmRepository", None,
                                               {"url": "https://charts.example"}), False, False,
     "status is not reported yet"),
]

# Rook phase kinds that share one rule shape: Progressing, Ready, Failure.
for rook_kind in ("CephBlockPool", "CephClient", "CephFilesystem"):
    CASES.extend([
        ("%s new" % rook_kind, rook(rook_kind, {"phase": "Progressing"}), False, False,
         "status.phase is Progressing, want Ready"),
        ("%s ready" % rook_kind, rook(rook_kind, {"phase": "Ready", "observedGeneration": 1}), True, False, None),
        ("%s failure" % rook_kind, rook(rook_kind, {"phase": "Failure"}), False, True, "status.phase is Failure"),
        ("%s failure for an older spec" % rook_kind,
         rook(rook_kind, {"phase": "Failure", "observedGeneration": 1}, generation=2), False, False,
         "status.observedGeneration 1 < metadata.generation 2"),
    ])

# Every Flux kind: reconciling, failing, stalled, ready.
for flux_api, flux_kind in FLUX_KINDS:
    CASES.extend([
        ("%s reconciling" % flux_kind, flux(flux_api, flux_kind, [
            cond("Reconciling", "True", "Progressing", "reconciliation in progress", og=1),
            cond("Ready", "Unknown", "Progressing", "reconciliation in progress", og=1)]), False, False,
         "condition Reconciling is True (reason Progressing: reconciliation in progress)"),
        ("%s failing" % flux_kind, flux(flux_api, flux_kind, [
            cond("Ready", "False", "InstallFailed", "chart not found", og=1)]), False, False,
         "condition Ready is False (reason InstallFailed: chart not found)"),
        ("%s stalled" % flux_kind, flux(flux_api, flux_kind, [
            cond("Stalled", "True", "RetriesExceeded", "Failed to install after 1 attempt(s)", og=1),
            cond("Ready", "False", "InstallFailed", "context deadline exceeded", og=1)]), False, True,
         "condition Stalled is True (reason RetriesExceeded: Failed to install after 1 attempt(s))"),
        ("%s ready" % flux_kind, flux(flux_api, flux_kind, [
            cond("Ready", "True", "Succeeded", "stored artifact", og=1)]), True, False, None),
        ("%s without observedGeneration" % flux_kind, flux(flux_api, flux_kind, [
            cond("Ready", "True", "Succeeded", og=1)], og=None), False, False,
         "status.observedGeneration is not reported yet"),
        ("%s suspended before it got ready" % flux_kind, flux(flux_api, flux_kind, [
            cond("Ready", "False", "DependencyNotReady", og=1)], spec={"interval": "1m", "suspend": True}),
         False, True, "spec.suspend is true"),
    ])


@pytest.mark.parametrize("label, obj, ready, terminal, needle", CASES, ids=[case[0] for case in CASES])
def test_kind_through_its_status_values(label, obj, ready, terminal, needle):
    result = evaluate(obj)
    assert isinstance(result, Readiness)
    assert result.ready is ready, (label, result)
    assert result.terminal is terminal, (label, result)
    if ready:
        assert result.missing == []
    else:
        assert result.missing, label
        assert mentions(result, needle), (needle, result.missing)


READY_WITH_GENERATION = [case for case in CASES if case[2] and has_generation_tracking(case[1])]


@pytest.mark.parametrize("label, obj", [case[:2] for case in READY_WITH_GENERATION],
                         ids=[case[0] for case in READY_WITH_GENERATION])
def test_stale_ready_is_not_ready_until_the_generation_is_observed(label, obj):
    stale = bump(obj)
    result = evaluate(stale)
    assert not result.ready, label
    assert not result.terminal
    assert any("generation" in line for line in result.missing), result.missing
    assert evaluate(catch_up(stale)).ready, label


def test_every_covered_kind_is_driven_to_ready_and_not_ready():
    key_of = dict((id(rule), key) for key, rule in readiness_module.RULES.items())
    seen = {}
    for case in CASES:
        obj = case[1]
        rule = readiness_module.rule_for(readiness_module.group_of(obj["apiVersion"]), obj["kind"])
        key = key_of.get(id(rule))
        assert key is not None, "case %r falls through to the generic rule" % case[0]
        seen.setdefault(key, set()).add(case[2])
    # ServerClaim is ready only through its bound Server, which comes from lookup.
    claim_ready = evaluate(server_claim(), lookup=Lookup(server())).ready
    seen.setdefault(("metal.ironcore.dev", "ServerClaim"), set()).add(claim_ready)
    statusless = set(key for key, rule in readiness_module.RULES.items() if rule.statusless is True)
    for key in readiness_module.RULES:
        assert True in seen.get(key, ()), "no ready case for %s/%s" % key
        if key not in statusless:
            assert False in seen.get(key, ()), "no not-ready case for %s/%s" % key


def test_every_kind_with_generation_tracking_has_a_stale_case():
    tracked = set(key for key, rule in readiness_module.RULES.items() if rule.observed_generation is True)
    key_of = dict((id(rule), key) for key, rule in readiness_module.RULES.items())
    covered = set()
    for case in READY_WITH_GENERATION:
        obj = case[1]
        covered.add(key_of[id(readiness_module.rule_for(readiness_module.group_of(obj["apiVersion"]), obj["kind"]))])
    assert tracked <= covered, tracked - covered


# ---------------------------------------------------------------------------
# Generation rules in detail.

def test_flux_ready_for_an_older_generation_is_not_ready():
    release = flux("helm.toolkit.fluxcd.io/v2", "HelmRelease", [cond("Ready", "True", "UpgradeSucceeded", og=3)],
                   og=3, generation=4)
    result = evaluate(release)
    assert not result.ready
    assert "status.observedGeneration 3 < metadata.generation 4" in result.missing
    assert "condition Ready (True) is for generation 3, metadata.generation is 4" in result.missing


def test_condition_with_old_generation_does_not_count_even_when_status_generation_is_current():
    release = flux("helm.toolkit.fluxcd.io/v2", "HelmRelease", [cond("Ready", "True", og=3)], og=4, generation=4)
    result = evaluate(release)
    assert not result.ready
    assert result.missing == ["condition Ready (True) is for generation 3, metadata.generation is 4"]


def test_stalled_for_an_older_generation_is_not_terminal():
    release = flux("helm.toolkit.fluxcd.io/v2", "HelmRelease", [
        cond("Stalled", "True", "RetriesExceeded", og=1), cond("Ready", "False", "InstallFailed", og=1)],
        og=1, generation=2)
    result = evaluate(release)
    assert not result.ready and not result.terminal


def test_rook_failure_without_observed_generation_is_terminal_but_not_for_an_older_one():
    # Rook writes Failure without touching observedGeneration (ObservedGenerationNotAvailable).
    assert evaluate(rook("CephBlockPool", {"phase": "Failure"})).terminal
    assert evaluate(rook("CephBlockPool", {"phase": "Failure", "observedGeneration": 2}, generation=2)).terminal
    assert not evaluate(rook("CephBlockPool", {"phase": "Failure", "observedGeneration": 1}, generation=2)).terminal


def test_known_kind_without_observed_generation_is_not_ready():
    result = evaluate(rook("CephBlockPool", {"phase": "Ready"}))
    assert not result.ready
    assert result.missing == ["status.observedGeneration is not reported yet"]


def test_observed_generation_ahead_is_reported():
    result = evaluate(make("apps/v1", "Deployment", {"observedGeneration": 5, "replicas": 1, "updatedReplicas": 1,
                                                     "availableReplicas": 1}, {"replicas": 1}, generation=4))
    assert not result.ready
    assert "status.observedGeneration 5 > metadata.generation 4" in result.missing


def test_deployment_deadline_for_an_older_generation_is_not_terminal():
    deployment = make("apps/v1", "Deployment", {"observedGeneration": 1, "conditions": [
        cond("Progressing", "False", "ProgressDeadlineExceeded")]}, {"replicas": 1}, generation=2)
    result = evaluate(deployment)
    assert not result.ready and not result.terminal


def test_object_being_deleted_is_terminal():
    namespace = make("v1", "Namespace", {"phase": "Active"}, namespace=None,
                     deletionTimestamp="2025-01-01T00:00:00Z")
    result = evaluate(namespace)
    assert not result.ready and result.terminal
    assert "metadata.deletionTimestamp is set: the object is being deleted" in result.missing


def test_shoot_ready_becomes_stale_on_spec_change_and_ready_again():
    ready = shoot({"observedGeneration": 1, "conditions": SHOOT_OK,
                   "lastOperation": last_op("Reconcile", "Succeeded", 100)})
    changed = bump(ready)
    assert evaluate(changed).missing == ["status.observedGeneration 1 < metadata.generation 2"]
    changed["status"]["observedGeneration"] = 2
    changed["status"]["lastOperation"] = last_op("Reconcile", "Processing", 10, "Deploying")
    assert evaluate(changed).missing == ["lastOperation Reconcile Processing 10%: Deploying"]
    changed["status"]["lastOperation"] = last_op("Reconcile", "Succeeded", 100)
    assert evaluate(changed).ready


# ---------------------------------------------------------------------------
# ServerClaim: the bound Server comes from lookup.

def server(name="server-1", state="Reserved", power="On", claim=("ns", "claim")):
    spec = {"systemUUID": "uuid-1", "bmcRef": {"name": "bmc-1"}}
    if claim:
        spec["serverClaimRef"] = {"namespace": claim[0], "name": claim[1]}
    return make(METAL, "Server", {"state": state, "powerState": power}, spec, name=name, namespace=None)


def server_claim(phase="Bound", power="On", server_name="server-1"):
    spec = {"power": power, "image": "ghcr.io/gardenlinux/gardenlinux:1592",
            "ignitionSecretRef": {"name": "ignition"}}
    if server_name:
        spec["serverRef"] = {"name": server_name}
    return make(METAL, "ServerClaim", {"phase": phase} if phase else None, spec, name="claim")


class Lookup(object):
    def __init__(self, *objects):
        self.objects = dict((obj["metadata"]["name"], obj) for obj in objects)
        self.calls = []

    def __call__(self, api_version, kind, name, namespace=None):
        self.calls.append((api_version, kind, name, namespace))
        return self.objects.get(name)


def test_server_claim_ready_when_bound_reserved_and_on():
    lookup = Lookup(server())
    result = evaluate(server_claim(), lookup=lookup)
    assert result == Readiness(True, False, [])
    assert lookup.calls == [(METAL, "Server", "server-1", None)]


def test_server_claim_waits_for_the_server_to_be_reserved_and_powered():
    result = evaluate(server_claim(), lookup=Lookup(server(state="Available", power="Off")))
    assert not result.ready and not result.terminal
    assert result.missing == ["bound Server server-1: status.state is Available, want Reserved",
                              "bound Server server-1: status.powerState is Off, want On"]
    result = evaluate(server_claim(), lookup=Lookup(server(power="PoweringOn")))
    assert result.missing == ["bound Server server-1: status.powerState is PoweringOn, want On"]


def test_server_claim_power_off_does_not_need_power():
    assert evaluate(server_claim(power="Off"), lookup=Lookup(server(power="Off"))).ready


def test_server_claim_server_error_is_terminal():
    result = evaluate(server_claim(), lookup=Lookup(server(state="Error")))
    assert result.terminal and not result.ready
    assert "bound Server server-1: status.state is Error" in result.missing


def test_server_claim_states_before_binding():
    assert evaluate(server_claim(phase=None), lookup=Lookup(server())).missing == ["status is not reported yet"]
    assert evaluate(server_claim(phase="Unbound"), lookup=Lookup(server())).missing == [
        "status.phase is Unbound, want Bound"]
    assert evaluate(server_claim(server_name=None), lookup=Lookup(server())).missing == [
        "spec.serverRef is not set yet"]


def test_server_claim_without_server_or_lookup_is_not_ready():
    assert evaluate(server_claim(), lookup=Lookup()).missing == ["bound Server server-1 not found"]
    assert evaluate(server_claim()).missing == ["bound Server server-1 not checked (no lookup given)"]


def test_server_claim_server_claimed_by_someone_else():
    result = evaluate(server_claim(), lookup=Lookup(server(claim=("other", "claim"))))
    assert result.missing == ["bound Server server-1: spec.serverClaimRef is other/claim"]


# ---------------------------------------------------------------------------
# Caller-given condition.

def test_condition_replaces_the_kind_rule():
    keystone = make("keystone.openstack.c5c3.io/v1alpha1", "Keystone", {"conditions": [
        cond("BootstrapReady", "True", "BootstrapJobSucceeded", og=1), cond("Ready", "False", "Deploying", og=1)]})
    assert not evaluate(keystone).ready
    assert evaluate(keystone, condition={"type": "BootstrapReady"}).ready
    assert evaluate(keystone, condition={"type": "Ready", "status": "False"}).ready


def test_condition_status_and_reason_must_match():
    memcached = make("memcached.c5c3.io/v1beta1", "Memcached", {"observedGeneration": 1, "conditions": [
        cond("Degraded", "True", "SecretNotFound", og=1)]})
    result = evaluate(memcached, condition={"type": "Degraded", "status": "False"})
    assert result.missing == ["condition Degraded is True, want False (reason SecretNotFound)"]
    result = evaluate(memcached, condition={"type": "Degraded", "status": "True", "reason": "Degraded"})
    assert result.missing == ["condition Degraded has reason SecretNotFound, want Degraded"]
    assert evaluate(memcached, condition={"type": "Degraded", "reason": "SecretNotFound"}).ready
    assert evaluate(memcached, condition={"type": "Missing"}).missing == ["condition Missing is not reported yet"]


def test_condition_keeps_the_generation_check():
    release = flux("helm.toolkit.fluxcd.io/v2", "HelmRelease", [cond("Released", "True", og=1)], og=1, generation=2)
    result = evaluate(release, condition={"type": "Released"})
    assert not result.ready
    assert "status.observedGeneration 1 < metadata.generation 2" in result.missing
    assert "condition Released (True) is for generation 1, metadata.generation is 2" in result.missing
    assert evaluate(catch_up(release), condition={"type": "Released"}).ready


def test_condition_keeps_the_kind_terminal_verdict_while_not_ready():
    job = make("batch/v1", "Job", {"conditions": [cond("Failed", "True", "BackoffLimitExceeded")]})
    result = evaluate(job, condition={"type": "Complete"})
    assert not result.ready and result.terminal
    assert result.missing == ["condition Complete is not reported yet",
                              "condition Failed is True (reason BackoffLimitExceeded)"]
    # Waiting for the failure itself: satisfied, so not terminal.
    assert evaluate(job, condition={"type": "Failed"}) == Readiness(True, False, [])


def test_condition_must_have_a_type():
    with pytest.raises(InputError, match="^condition: must be a mapping with a type"):
        evaluate(make("v1", "ConfigMap"), condition={"status": "True"})


# ---------------------------------------------------------------------------
# JMESPath expressions.

POOL = rook("CephBlockPool", {"phase": "Ready", "observedGeneration": 1, "info": {"rbdMirrorBootstrapPeerSecretName": "p"}})


def test_expression_true_is_ready():
    assert evaluate(POOL, expression="status.phase == 'Ready'").ready
    assert evaluate(POOL, expression="status.info.rbdMirrorBootstrapPeerSecretName").ready


def test_expression_false_names_the_expression_and_result():
    result = evaluate(POOL, expression="status.phase == 'Failure'")
    assert not result.ready and not result.terminal
    assert result.missing == ["expression status.phase == 'Failure' is not true (result: False)"]


def test_expression_keeps_the_generation_check():
    result = evaluate(bump(POOL), expression="status.phase == 'Ready'")
    assert result.missing == ["status.observedGeneration 1 < metadata.generation 2"]
    assert evaluate(catch_up(bump(POOL)), expression="status.phase == 'Ready'").ready


def test_jmespath_truthiness():
    configmap = make("v1", "ConfigMap")
    configmap["data"] = {"zero": 0, "empty": [], "text": ""}
    assert evaluate(configmap, expression="data.zero").ready  # 0 is true in JMESPath
    assert not evaluate(configmap, expression="data.empty").ready
    assert not evaluate(configmap, expression="data.text").ready
    assert not evaluate(configmap, expression="data.absent").ready


def test_failed_expression_is_terminal():
    failed = rook("CephBlockPool", {"phase": "Progressing", "observedGeneration": 1,
                                    "conditions": [cond("Failure", "True", "ReconcileFailed")]})
    result = evaluate(failed, failed_expression="status.conditions[?type=='Failure' && status=='True'] | [0]")
    assert result.terminal and not result.ready
    assert any(line.startswith("failed_expression status.conditions") for line in result.missing)
    assert not evaluate(POOL, failed_expression="status.phase == 'Failure'").terminal


def test_failed_expression_with_expression_and_unknown_kind():
    widget = make("example.com/v1", "Widget", {"state": "broken"})
    result = evaluate(widget, expression="status.state == 'ok'", failed_expression="status.state == 'broken'")
    assert result.terminal
    assert evaluate(make("example.com/v1", "Widget", {"state": "ok"}), expression="status.state == 'ok'",
                    failed_expression="status.state == 'broken'") == Readiness(True, False, [])


def test_invalid_expression_is_reported():
    with pytest.raises(InputError) as error:
        evaluate(POOL, expression="status.[")
    (problem,) = error.value.problems
    assert problem.startswith("expression: 'status.[' is not a valid JMESPath expression")
    with pytest.raises(InputError, match="^failed_expression: 'status.\\[' is not a valid"):
        evaluate(POOL, failed_expression="status.[")


def test_missing_jmespath_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "jmespath", None)
    monkeypatch.setitem(sys.modules, "jmespath.exceptions", None)
    monkeypatch.setattr(readiness_module, "_JMESPATH_CACHE", {})
    with pytest.raises(InputError) as error:
        evaluate(POOL, expression="status.phase")
    assert error.value.problems == ["expression: needs the Python package jmespath on the host running the module "
                                    "(pip install jmespath)"]
    # The kind rules need no jmespath.
    assert evaluate(POOL).ready


# ---------------------------------------------------------------------------
# The generic rule for kinds not in the table.

def test_generic_rule():
    widget = "example.com/v1"
    assert evaluate(make(widget, "Widget")).missing == ["status is not reported yet"]
    assert evaluate(make(widget, "Widget", {"phase": "Whatever"})).ready
    assert evaluate(make(widget, "Widget", {"conditions": [cond("Ready")]})).ready
    assert evaluate(make(widget, "Widget", {"conditions": [cond("Synced")]})).missing == [
        "condition Ready is not reported yet"]
    assert evaluate(make(widget, "Widget", {"observedGeneration": 1, "conditions": [cond("Ready")]},
                         generation=2)).missing == ["status.observedGeneration 1 < metadata.generation 2"]
    stalled = evaluate(make(widget, "Widget", {"conditions": [cond("Stalled", "True", "Invalid", "bad spec")]}))
    assert stalled.terminal and stalled.missing == ["condition Stalled is True (reason Invalid: bad spec)"]


# ---------------------------------------------------------------------------
# The value object and the table.

def test_readiness_value_object():
    missing = ["x"]
    result = Readiness(False, True, missing)
    missing.append("y")
    assert result.as_dict() == {"ready": False, "terminal": True, "missing": ["x"]}
    assert result == Readiness(False, True, ["x"])
    assert result != Readiness(False, False, ["x"])
    assert "terminal=True" in repr(result)


def test_long_messages_are_shortened():
    message = "word " * 500
    result = evaluate(make("v1", "Pod", {"phase": "Running", "conditions": [cond("Ready", "False", "X", message)]}))
    assert len(result.missing[0]) < readiness_module.MESSAGE_LIMIT + 60
    assert result.missing[0].endswith("...)")


def test_not_an_object_is_rejected():
    with pytest.raises(InputError, match="^object: must be a Kubernetes object as a mapping, got list$"):
        evaluate(["not", "an", "object"])


def test_covered_kinds_and_table():
    kinds = readiness_module.covered_kinds()
    assert kinds == sorted(kinds)
    assert len(kinds) == len(readiness_module.RULES)
    for expected in ("core.gardener.cloud/Shoot", "metal.ironcore.dev/ServerClaim", "ceph.rook.io/CephBlockPool",
                     "openstack.k-orc.cloud/*", "helm.toolkit.fluxcd.io/HelmRelease", "apps/Deployment",
                     "core/Namespace", "apiextensions.k8s.io/CustomResourceDefinition", "*.c5c3.io/*"):
        assert expected in kinds
    table = readiness_module.rules_table()
    assert [row["kind"] for row in table] == kinds
    for row in table:
        assert row["ready"] and row["terminal"] and row["source"], row


def test_rule_lookup_order():
    rule_for = readiness_module.rule_for
    rules = readiness_module.RULES
    assert rule_for("memcached.c5c3.io", "Memcached") is rules[("memcached.c5c3.io", "Memcached")]
    assert rule_for("keystone.openstack.c5c3.io", "Keystone") is rules[("keystone.openstack.c5c3.io", "Keystone")]
    assert rule_for("nova.openstack.c5c3.io", "Nova") is rules[("*.c5c3.io", "*")]
    assert rule_for("c5c3.io", "SecretAggregate") is rules[("c5c3.io", "*")]
    assert rule_for("openstack.k-orc.cloud", "Endpoint") is rules[("openstack.k-orc.cloud", "*")]
    assert rule_for("notc5c3.io", "X") is readiness_module.GENERIC_RULE
    assert readiness_module.group_of("v1") == "" and readiness_module.group_of("apps/v1") == "apps"


def test_no_status_is_said_once_but_overrides_keep_the_generation_requirement():
    assert evaluate(shoot(None, spec={"region": "eu-de-1", "seedName": "seed-1"})).missing == [
        "status is not reported yet"]
    fresh = make("apps/v1", "Deployment", None, {"replicas": 1})
    result = evaluate(fresh, expression="spec.replicas")
    assert not result.ready
    assert result.missing == ["status.observedGeneration is not reported yet"]


def test_crd_default_observed_generation_minus_one_means_nothing_observed_yet():
    release = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
               "metadata": {"name": "r", "namespace": "n", "generation": 1},
               "status": {"observedGeneration": -1}}
    state = evaluate(release)
    assert not state.ready and not state.terminal
    assert "status.observedGeneration is not reported yet" in state.missing
    oci = {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
           "metadata": {"name": "o", "namespace": "n", "generation": 1},
           "spec": {"type": "oci", "url": "oci://example.invalid/charts"}, "status": {"observedGeneration": -1}}
    assert evaluate(oci).ready


# --- an unscheduled Shoot: no seed, so gardenlet and the care controller never write its status

def _created(seconds_ago):
    import datetime
    import time
    return datetime.datetime.utcfromtimestamp(time.time() - seconds_ago).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_an_unscheduled_shoot_is_named_at_once_and_fails_after_the_scheduling_grace():
    young = shoot(None)
    young["metadata"]["creationTimestamp"] = _created(5)
    result = evaluate(young)
    assert not result.ready and not result.terminal
    assert "the Shoot has no seed (spec.seedName is empty, " in result.missing[1]
    old = shoot(None)
    old["metadata"]["creationTimestamp"] = _created(readiness_module.SCHEDULING_GRACE + 5)
    result = evaluate(old)
    assert result.terminal and "gardener-scheduler found none that fits" in result.missing[1]
    # A seed is assigned (the scheduler did its part): waiting for gardenlet is not a failure.
    scheduled = shoot(None, spec={"region": "eu-de-1", "seedName": "seed-1"})
    scheduled["metadata"]["creationTimestamp"] = _created(readiness_module.SCHEDULING_GRACE + 5)
    assert not evaluate(scheduled).terminal
    # Its events are read for the report (the scheduler's SchedulingFailed).
    assert readiness_module.rule_for("core.gardener.cloud", "Shoot").events


def test_a_korc_user_is_ready_once_its_password_secret_is_applied():
    conditions = [{"type": "Available", "status": "True", "observedGeneration": 2},
                  {"type": "Progressing", "status": "False", "reason": "Success", "observedGeneration": 2}]
    spec = {"resource": {"passwordRef": "nova-keystone-user-v1"}}
    user = make(KORC, "User", {"conditions": conditions, "resource": {"appliedPasswordRef": "nova-keystone-user"}},
                spec, generation=2)
    state = evaluate(user)
    assert not state.ready and not state.terminal
    assert state.missing == ["the password of Secret nova-keystone-user-v1 is not applied yet "
                             "(status.resource.appliedPasswordRef: nova-keystone-user)"]
    user["status"]["resource"]["appliedPasswordRef"] = "nova-keystone-user-v1"
    assert evaluate(user).ready
    # Other kinds keep the rule without the password.
    assert evaluate(make(KORC, "Project", {"conditions": conditions}, spec, generation=2)).ready
