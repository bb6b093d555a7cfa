"""K-ORC's clouds.yaml through OpenBao: korc_openbao_secrets + c5c3.cobaltcore.apply on the lab's control plane.

No External Secrets Operator runs in the lab: the external-secrets v0.16.2 CRDs (lab/crds/upstream.json)
judge the PushSecret and the ExternalSecret, nothing syncs them. The test applies both for a fresh
tenant-like namespace, reads back what the API server stored, applies again (unchanged, no writes),
once more with a force-sync annotation (both configured), and removes the namespace.
"""

import json
import uuid

import pytest

from conftest import kubectl, read_json, run_tasks

HOST = "lab-control-plane"
LABELS = {"app.kubernetes.io/managed-by": "c5c3.cobaltcore"}


@pytest.fixture
def namespace(kubeconfigs, region):  # the ExternalSecret CRDs come from phase 3
    name = "openstack-obao-%s" % uuid.uuid4().hex[:8]
    yield name
    kubectl(kubeconfigs[HOST], "delete", "namespace", name, "--wait=false", "--ignore-not-found")


def _tasks():
    secrets = ("({'namespace': ns, 'labels': labels, 'annotations': annotations | default(none)}"
               " | c5c3.cobaltcore.korc_openbao_secrets)")
    return [
        {"name": "invalid", "ignore_errors": True, "ansible.builtin.debug": {
            "msg": "{{ {'namespace': ns, 'store_kind': 'Vault', 'refresh_interval': 'daily'}"
                   " | c5c3.cobaltcore.korc_openbao_secrets }}"}},
        {"name": "apply", "c5c3.cobaltcore.apply": {
            "kubeconfig": "{{ kubeconfig }}",
            "definition": "{{ [{'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': ns}}] + %s }}" % secrets}},
    ]


def _get(kubeconfig, namespace, resource, name):
    return json.loads(kubectl(kubeconfig, "-n", namespace, "get", resource, name, "-o", "json").stdout)


def test_push_secret_and_external_secret_are_stored_and_idempotent(lab, namespace, tmp_path, kubeconfigs):
    kc = kubeconfigs[HOST]
    # The lab's own kubeconfig: the inventory's cobaltcore_kubeconfig of a Shoot is the one phase 2 fetches.
    extra = {"ns": namespace, "labels": LABELS, "kubeconfig": kc}
    rc, tasks = run_tasks(_tasks(), tmp_path, hosts=HOST, extra_vars=extra)
    invalid = tasks["invalid"][HOST]
    assert invalid["failed"] and "nothing was changed" in invalid["msg"]
    assert "\n- store_kind: must be one of ClusterSecretStore, SecretStore, got 'Vault'" in invalid["msg"]
    assert "\n- refresh_interval: 'daily' is not a duration" in invalid["msg"]
    first = tasks["apply"][HOST]
    assert rc == 0 and first["changed"], first
    assert first["summary"] == {"created": 3}

    key = "kv-v2/data/%s/k-orc/app-credential" % namespace
    push = _get(kc, namespace, "pushsecrets.v1alpha1.external-secrets.io", "k-orc-app-credential")
    assert push["metadata"]["labels"] == LABELS
    assert push["spec"]["secretStoreRefs"] == [{"name": "openbao-cluster-store", "kind": "ClusterSecretStore"}]
    assert push["spec"]["selector"] == {"secret": {"name": "k-orc-app-credential"}}
    (data,) = push["spec"]["data"]
    assert data["match"] == {"secretKey": "clouds.yaml", "remoteRef": {"remoteKey": key, "property": "clouds.yaml"}}
    # The CRD's defaults, which the manifest leaves to the API server (as seed 003 does).
    assert (push["spec"]["refreshInterval"], push["spec"]["updatePolicy"], push["spec"]["deletionPolicy"]) == \
        ("1h", "Replace", "None")

    external = _get(kc, namespace, "externalsecrets.v1beta1.external-secrets.io", "k-orc-clouds-yaml")
    assert external["apiVersion"] == "external-secrets.io/v1beta1"
    assert external["metadata"]["labels"] == LABELS
    spec = external["spec"]
    assert spec["refreshInterval"] == "1h"
    assert spec["secretStoreRef"] == {"name": "openbao-cluster-store", "kind": "ClusterSecretStore"}
    assert spec["target"]["name"] == "k-orc-clouds-yaml" and spec["target"]["creationPolicy"] == "Owner"
    (data,) = spec["data"]
    assert data["secretKey"] == "clouds.yaml"
    assert (data["remoteRef"]["key"], data["remoteRef"]["property"]) == (key, "clouds.yaml")
    # Stored as v1 (the CRD's storage version, conversion None): the same object reads back as v1.
    stored = _get(kc, namespace, "externalsecrets.v1.external-secrets.io", "k-orc-clouds-yaml")
    assert stored["apiVersion"] == "external-secrets.io/v1" and stored["spec"] == spec
    # No controller in the lab: nothing creates the target Secret.
    assert read_json(kc, "-n", namespace, "secret", "k-orc-clouds-yaml") is None

    rc, tasks = run_tasks(_tasks()[1:], tmp_path, hosts=HOST, extra_vars=extra)
    again = tasks["apply"][HOST]
    assert rc == 0 and not again["changed"], again
    assert again["summary"] == {"unchanged": 3}
    assert sum(again["requests"].get(verb, 0) for verb in ("POST", "PUT", "PATCH", "DELETE")) == 0

    # A new annotation (ESO's force-sync, e.g. after a new credential) changes both objects, not the namespace.
    extra["annotations"] = {"force-sync": "1700000000"}
    rc, tasks = run_tasks(_tasks()[1:], tmp_path, hosts=HOST, extra_vars=extra)
    synced = tasks["apply"][HOST]
    assert rc == 0 and synced["changed"] and synced["summary"] == {"configured": 2, "unchanged": 1}, synced
    push = _get(kc, namespace, "pushsecrets.v1alpha1.external-secrets.io", "k-orc-app-credential")
    assert push["metadata"]["annotations"] == {"force-sync": "1700000000"}
