# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""K-ORC's clouds.yaml through OpenBao: the PushSecret/ExternalSecret pair of seed 003."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import pytest
import yaml

from conftest import lab_upstream_crds
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import openbao
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import validate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError

# Seed 003 "Credential Management for K-ORC", the two manifests as the seed writes them; the
# ExternalSecret lives in the OpenStack cluster's namespace (the seed puts it in orc-system), where
# the K-ORC objects' cloudCredentialsRef looks for k-orc-clouds-yaml.
SEED_PUSH_SECRET = yaml.safe_load("""
apiVersion: external-secrets.io/v1alpha1
kind: PushSecret
metadata:
  name: k-orc-app-credential
  namespace: openstack
spec:
  secretStoreRefs:
    - name: openbao-cluster-store
      kind: ClusterSecretStore
  selector:
    secret:
      name: k-orc-app-credential
  data:
    - match:
        secretKey: clouds.yaml
        remoteRef:
          remoteKey: kv-v2/data/openstack/k-orc/app-credential
          property: clouds.yaml
""")
SEED_EXTERNAL_SECRET = yaml.safe_load("""
apiVersion: external-secrets.io/v1beta1
kind: ExternalSecret
metadata:
  name: k-orc-clouds-yaml
  namespace: openstack
spec:
  refreshInterval: 1h
  secretStoreRef:
    name: openbao-cluster-store
    kind: ClusterSecretStore
  target:
    name: k-orc-clouds-yaml
    creationPolicy: Owner
  data:
    - secretKey: clouds.yaml
      remoteRef:
        key: kv-v2/data/openstack/k-orc/app-credential
        property: clouds.yaml
""")


def problems_of(settings):
    with pytest.raises(InputError) as error:
        openbao.korc_credential_sync(settings)
    return error.value.problems


def test_namespace_openstack_is_exactly_the_seed():
    assert openbao.korc_credential_sync({"namespace": "openstack"}) == [SEED_PUSH_SECRET, SEED_EXTERNAL_SECRET]


def test_none_and_empty_settings_take_the_defaults():
    settings = dict((key, None) for key in openbao.DEFAULTS)
    settings.update(namespace="openstack", store_name="", remote_key="", refresh_interval="")
    assert openbao.korc_credential_sync(settings) == [SEED_PUSH_SECRET, SEED_EXTERNAL_SECRET]


def test_defaults():
    s = openbao.normalize_settings({"namespace": "openstack-customer-a"})
    assert s == {
        "namespace": "openstack-customer-a",
        "store_name": "openbao-cluster-store",
        "store_kind": "ClusterSecretStore",
        "remote_key": "kv-v2/data/openstack-customer-a/k-orc/app-credential",
        "source_secret": "k-orc-app-credential",
        "target_secret": "k-orc-clouds-yaml",
        "secret_key": "clouds.yaml",
        "refresh_interval": "1h",
        "push_refresh_interval": None,
        "labels": {},
        "annotations": {},
    }
    # The source Secret is not the one the K-ORC objects name, the target is.
    assert s["source_secret"] == naming.KORC_APP_CREDENTIAL_SECRET != naming.KORC_CLOUDS_SECRET == s["target_secret"]


def test_naming_constants():
    assert naming.openbao_korc_remote_key("openstack") == "kv-v2/data/openstack/k-orc/app-credential"
    assert naming.openbao_korc_remote_key("t", "secret/{namespace}/korc") == "secret/t/korc"
    assert naming.SECRET_STORE_KINDS == ("ClusterSecretStore", "SecretStore")
    assert naming.PUSH_SECRET_API_VERSION.startswith(naming.EXTERNAL_SECRETS_GROUP + "/")
    assert naming.EXTERNAL_SECRET_API_VERSION.startswith(naming.EXTERNAL_SECRETS_GROUP + "/")


def test_a_tenant_namespace():
    push, external = openbao.korc_credential_sync({"namespace": "openstack-customer-a-prod"})
    key = "kv-v2/data/openstack-customer-a-prod/k-orc/app-credential"
    assert push["metadata"] == {"name": "k-orc-app-credential", "namespace": "openstack-customer-a-prod"}
    assert push["spec"]["data"][0]["match"]["remoteRef"] == {"remoteKey": key, "property": "clouds.yaml"}
    assert external["metadata"] == {"name": "k-orc-clouds-yaml", "namespace": "openstack-customer-a-prod"}
    assert external["spec"]["data"][0]["remoteRef"] == {"key": key, "property": "clouds.yaml"}
    assert external["spec"]["target"] == {"name": "k-orc-clouds-yaml", "creationPolicy": "Owner"}


def test_every_setting_reaches_the_manifests():
    push, external = openbao.korc_credential_sync({
        "namespace": "openstack-t", "store_name": "openbao", "store_kind": "SecretStore",
        "remote_key": "secret/data/{namespace}/korc", "source_secret": "korc-source", "target_secret": "korc-clouds",
        "secret_key": "clouds.yml", "refresh_interval": "1h30m", "push_refresh_interval": "15s",
        "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, "tier": 1}, "annotations": {"force-sync": "1700000000"},
    })
    labels = {"app.kubernetes.io/managed-by": "c5c3.cobaltcore", "tier": "1"}
    annotations = {"force-sync": "1700000000"}
    assert push == {
        "apiVersion": "external-secrets.io/v1alpha1", "kind": "PushSecret",
        "metadata": {"name": "korc-source", "namespace": "openstack-t", "labels": labels, "annotations": annotations},
        "spec": {
            "refreshInterval": "15s",
            "secretStoreRefs": [{"name": "openbao", "kind": "SecretStore"}],
            "selector": {"secret": {"name": "korc-source"}},
            "data": [{"match": {"secretKey": "clouds.yml",
                                "remoteRef": {"remoteKey": "secret/data/openstack-t/korc", "property": "clouds.yml"}}}],
        },
    }
    assert external == {
        "apiVersion": "external-secrets.io/v1beta1", "kind": "ExternalSecret",
        "metadata": {"name": "korc-clouds", "namespace": "openstack-t", "labels": labels, "annotations": annotations},
        "spec": {
            "refreshInterval": "1h30m",
            "secretStoreRef": {"name": "openbao", "kind": "SecretStore"},
            "target": {"name": "korc-clouds", "creationPolicy": "Owner"},
            "data": [{"secretKey": "clouds.yml", "remoteRef": {"key": "secret/data/openstack-t/korc", "property": "clouds.yml"}}],
        },
    }


def test_the_labels_are_copies():
    labels = {"a": "b"}
    push, external = openbao.korc_credential_sync({"namespace": "openstack", "labels": labels})
    push["metadata"]["labels"]["a"] = "changed"
    assert external["metadata"]["labels"] == {"a": "b"} and labels == {"a": "b"}


@pytest.mark.parametrize("duration", ["1h", "30m", "1h30m", "15s", "1.5h", "500ms", "0", "2h45m30s"])
def test_durations(duration):
    assert openbao.korc_credential_sync({"namespace": "x", "refresh_interval": duration})[1]["spec"]["refreshInterval"] == duration


@pytest.mark.parametrize("duration", ["1", "1d", "-1h", "h", "1 h", "1H", 3600, "1h-30m"])
def test_bad_durations(duration):
    (problem,) = problems_of({"namespace": "x", "refresh_interval": duration})
    assert problem.startswith("refresh_interval: ") and "not a duration" in problem


def test_all_problems_are_reported_together():
    problems = problems_of({
        "namespace": "Open_Stack", "store_name": "OpenBao!", "store_kind": "Vault",
        "remote_key": "/kv-v2//{tenant}", "source_secret": "x" * 254, "target_secret": "bad_name",
        "secret_key": "clouds yaml", "refresh_interval": "1day", "push_refresh_interval": "soon",
        "labels": {"bad key!": "v", "ok": "bad value!", "flag": True}, "store": "typo",
        "annotations": {"a/b/c": "x", "n": 1},
    })
    assert problems == [
        "store: unknown setting (known: annotations, labels, namespace, push_refresh_interval, refresh_interval, remote_key, "
        "secret_key, source_secret, store_kind, store_name, target_secret)",
        "namespace: 'Open_Stack' must be a DNS-1123 label (the OpenStack cluster's namespace)",
        "store_name: 'OpenBao!' is not a DNS-1123 subdomain (a Kubernetes object name)",
        "source_secret: %r is not a DNS-1123 subdomain (a Kubernetes object name)" % ("x" * 254),
        "target_secret: 'bad_name' is not a DNS-1123 subdomain (a Kubernetes object name)",
        "store_kind: must be one of ClusterSecretStore, SecretStore, got 'Vault'",
        "secret_key: 'clouds yaml' is not a Secret data key (letters, digits, '-', '_', '.')",
        "refresh_interval: '1day' is not a duration like 1h, 30m, 1h30m or 15s",
        "push_refresh_interval: 'soon' is not a duration like 1h, 30m, 1h30m or 15s",
        "remote_key: '/kv-v2//{tenant}' uses unknown placeholders tenant (known: namespace)",
        "labels.bad key!: 'v' is not a valid Kubernetes label",
        "labels.flag: True is not a label value (a string)",
        "labels.ok: 'bad value!' is not a valid Kubernetes label",
        "annotations.a/b/c: 'a/b/c' is not a valid annotation key",
        "annotations.n: 1 is not a string",
    ]


def test_namespace_is_required():
    assert problems_of({}) == ["namespace: None must be a DNS-1123 label (the OpenStack cluster's namespace)"]


def test_settings_must_be_a_mapping():
    assert problems_of(["openstack"]) == ["settings: must be a mapping, got list"]


def test_source_and_target_must_differ():
    (problem,) = problems_of({"namespace": "openstack", "source_secret": "k-orc-clouds-yaml"})
    assert problem.startswith("target_secret: 'k-orc-clouds-yaml' is also the source_secret")


@pytest.mark.parametrize("remote_key, message", [
    ("/kv-v2/data/{namespace}", "not an OpenBao path"),
    ("kv-v2/data/{namespace}/", "not an OpenBao path"),
    ("kv-v2//data/{namespace}", "not an OpenBao path"),
    ("kv-v2/data/{namespace} x", "not an OpenBao path"),
    ("kv-v2/data/{namespace", "not a valid template"),
    ("   ", "must be a non-empty string"),
    (42, "must be a non-empty string"),
])
def test_bad_remote_keys(remote_key, message):
    (problem,) = problems_of({"namespace": "openstack", "remote_key": remote_key})
    assert problem.startswith("remote_key: ") and message in problem


def test_a_fixed_remote_key_is_taken_as_it_is():
    push = openbao.korc_credential_sync({"namespace": "openstack", "remote_key": "kv/k-orc"})[0]
    assert push["spec"]["data"][0]["match"]["remoteRef"]["remoteKey"] == "kv/k-orc"


def test_labels_and_annotations_must_be_mappings():
    assert problems_of({"namespace": "openstack", "labels": ["a"], "annotations": "a=b"}) == [
        "labels: must be a mapping of label keys to values, got list",
        "annotations: must be a mapping of annotation keys to strings, got str"]


# --- the manifests against the external-secrets CRDs the lab installs (v0.16.2) ---------------------

def _lab_crd_schemas():
    """{(apiVersion, kind): spec schema} of the lab's external-secrets CRDs (lab/crds/upstream.json)."""
    unused, paths = lab_upstream_crds("external-secrets")
    schemas = {}
    for path in paths:
        with open(path) as handle:
            crd = yaml.safe_load(handle)
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                key = ("%s/%s" % (crd["spec"]["group"], version["name"]), crd["spec"]["names"]["kind"])
                schemas[key] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return schemas


@pytest.mark.parametrize("namespace", ["openstack", "openstack-customer-a"])
def test_manifests_match_the_lab_external_secrets_crds(namespace):
    schemas = _lab_crd_schemas()
    settings = {"namespace": namespace, "store_kind": "SecretStore", "push_refresh_interval": "10m"}
    for manifest in openbao.korc_credential_sync(settings):
        schema = schemas[(manifest["apiVersion"], manifest["kind"])]
        assert validate(schema, manifest["spec"], "spec") == [], manifest["kind"]
