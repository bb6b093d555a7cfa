# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's Helm chart repository (lab/regionlab/charts.py), without a lab: packaging is
reproducible, index.yaml matches its packages, lab-made charts say so, real ones say where they
come from. The whole repository is built from the Go module cache where the pinned modules are."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml

from conftest import REPO, _go_escape, go_module_dir

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab import charts, config  # noqa: E402  pylint: disable=wrong-import-position

GROUPS = {"gardener", "ironcore", "management", "control_plane", "hypervisor_pools", "storage_pools"}
# Lab-made charts whose CRDs are hand-written lab/crds files only (no Go module needed).
HAND_WRITTEN = ["keystone-operator", "c5c3-operator", "ovn-agents"]


def made_versions(name):
    """The two versions the repository serves of a lab-made chart: its own and the next patch, newest first."""
    version = str(yaml.safe_load((charts.SOURCES / name / "Chart.yaml").read_text())["version"])
    return [charts.next_patch(version), version]


def made_dirs():
    return sorted(p.name for p in charts.SOURCES.iterdir() if (p / "Chart.yaml").exists())


def members(data):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return [(m, tar.extractfile(m).read()) for m in tar.getmembers()]


def made(name):
    return charts.made_charts(name, charts.made_entries()[name])


def cached_module(path, version):
    """What `go mod download -json` says of a module, read from the module cache (skips outside CI when absent)."""
    directory = go_module_dir(path, version)
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
    download = os.path.join(cache, "cache", "download", _go_escape(path), "@v", _go_escape(version))
    with open(download + ".ziphash") as handle:
        return {"Dir": directory, "Sum": handle.read().strip(), "Info": download + ".info"}


# Lab-made charts -------------------------------------------------------------------

def test_every_lab_made_chart_is_marked_and_listed():
    entries = charts.made_entries()
    assert made_dirs() == sorted(entries)
    for name in made_dirs():
        chart = yaml.safe_load((charts.SOURCES / name / "Chart.yaml").read_text())
        assert chart["name"] == name
        assert chart["annotations"] == {charts.MADE_ANNOTATION: "true"}, name
        assert chart["description"].startswith("Lab-made stand-in for "), name
        # The description says why no real chart is used.
        assert re.search(r"no Helm chart|not served|refuses|no Go module|no upstream chart", chart["description"]), name
        assert set(entries[name]["clusters"]) <= GROUPS, name
    real = {e["name"] for e in charts.real_entries()}
    assert not real & set(entries), "a chart is both real and lab-made"


def test_lab_made_charts_come_in_two_versions_marked_in_the_index(tmp_path):
    built = [(chart, charts.EPOCH) for name in HAND_WRITTEN for chart in made(name)]
    index = charts.write_repository(built, tmp_path)
    for name in HAND_WRITTEN:
        versions = index["entries"][name]
        assert [v["version"] for v in versions] == made_versions(name)
        assert all(v["annotations"][charts.MADE_ANNOTATION] == "true" for v in versions)
        assert [v["appVersion"] for v in versions] == made_versions(name)


def test_lab_made_crds_are_selected_from_the_lab_files():
    files = charts.made_crds("c5c3-operator", charts.made_entries()["c5c3-operator"])
    # OpenStackCluster is the management cluster's Crossplane claim, not the operator's.
    assert sorted(files) == ["crds/controlplanes.c5c3.io.yaml", "crds/credentialrotations.c5c3.io.yaml",
                             "crds/secretaggregates.c5c3.io.yaml"]
    for path, data in files.items():
        doc = yaml.safe_load(data)
        assert doc["kind"] == "CustomResourceDefinition" and "crds/%s.yaml" % doc["metadata"]["name"] == path
    assert charts.made_crds("ovn-agents", charts.made_entries()["ovn-agents"]) == {}


def test_lab_made_crds_from_upstream_modules():
    entries = charts.made_entries()
    files = charts.made_crds("openstack-resource-controller", entries["openstack-resource-controller"],
                             module_of=go_module_dir)
    assert len(files) == 24
    assert {yaml.safe_load(d)["spec"]["group"] for d in files.values()} == {"openstack.k-orc.cloud"}
    topology = charts.made_crds("rabbitmq-messaging-topology-operator",
                                entries["rabbitmq-messaging-topology-operator"], module_of=go_module_dir)
    assert sorted(topology) == ["crds/permissions.rabbitmq.com.yaml", "crds/users.rabbitmq.com.yaml",
                                "crds/vhosts.rabbitmq.com.yaml"]


# Packaging -------------------------------------------------------------------------

def test_packaging_is_deterministic_and_shaped_like_helm_package(tmp_path, monkeypatch):
    first, second = made("keystone-operator")[0], made("keystone-operator")[0]
    data = charts.package(first)
    assert data == charts.package(second)
    # Neither where the sources are nor their modification times matter: a copy with other times
    # packages to the same bytes.
    copy = tmp_path / "charts"
    shutil.copytree(charts.SOURCES, copy)
    for path in copy.rglob("*"):
        os.utime(path, (0, 0))
    monkeypatch.setattr(charts, "SOURCES", copy)
    monkeypatch.setattr(charts, "SHARED_TEMPLATES", copy / "_shared" / "templates")
    assert charts.package(made("keystone-operator")[0]) == data
    assert gzip.decompress(data)  # plain gzip
    assert data[4:8] == b"\0\0\0\0"  # no gzip timestamp
    entries = members(data)
    names = [m.name for m, _data in entries]
    assert names[0] == "keystone-operator/Chart.yaml"
    assert names[1:] == sorted(names[1:])
    assert all(n.startswith("keystone-operator/") for n in names)
    assert all(m.isfile() and m.mode == 0o644 and m.mtime == charts.EPOCH.timestamp() and m.uid == 0
               for m, _data in entries)
    assert "keystone-operator/crds/keystones.keystone.openstack.c5c3.io.yaml" in names
    assert "keystone-operator/templates/deployment.yaml" in names
    chart_yaml = yaml.safe_load(dict((m.name, d) for m, d in entries)["keystone-operator/Chart.yaml"])
    assert chart_yaml["version"] == made_versions("keystone-operator")[1]
    assert chart_yaml["annotations"][charts.MADE_ANNOTATION] == "true"


def test_index_digests_match_the_files(tmp_path):
    built = [(chart, charts.EPOCH) for name in HAND_WRITTEN for chart in made(name)]
    index = charts.write_repository(built, tmp_path)
    on_disk = yaml.safe_load((tmp_path / "index.yaml").read_text())
    assert on_disk == index
    assert index["apiVersion"] == "v1" and index["generated"]
    files = sorted(p.name for p in tmp_path.glob("*.tgz"))
    listed = sorted(url for versions in index["entries"].values() for v in versions for url in v["urls"])
    assert files == listed
    for name, versions in index["entries"].items():
        for version in versions:
            data = (tmp_path / version["urls"][0]).read_bytes()
            assert version["digest"] == hashlib.sha256(data).hexdigest()
            assert version["urls"] == ["%s-%s.tgz" % (name, version["version"])]
            chart_yaml = yaml.safe_load(dict((m.name, d) for m, d in members(data))["%s/Chart.yaml" % name])
            assert {k: version[k] for k in ("name", "version", "appVersion", "apiVersion")} == \
                {k: chart_yaml[k] for k in ("name", "version", "appVersion", "apiVersion")}
    # Rewriting gives the same bytes.
    before = (tmp_path / "index.yaml").read_bytes()
    charts.write_repository(built, tmp_path)
    assert (tmp_path / "index.yaml").read_bytes() == before


def test_build_skips_when_inputs_are_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "STATE", tmp_path)
    monkeypatch.setattr(charts, "REPOSITORY", tmp_path / "charts")
    monkeypatch.setattr(charts, "STAMP", tmp_path / "charts.stamp")
    calls = []

    def some_charts():
        calls.append(1)
        return [(c, charts.EPOCH) for c in made("ovn-agents")]
    monkeypatch.setattr(charts, "all_charts", some_charts)
    assert charts.build(log=lambda _: None) is True
    assert sorted(p.name for p in (tmp_path / "charts").iterdir()) == [
        "index.yaml", "ovn-agents-0.2.0.tgz", "ovn-agents-0.2.1.tgz"]
    assert charts.build(log=lambda _: None) is False and len(calls) == 1
    (tmp_path / "charts.stamp").write_text("an older input")
    assert charts.build(log=lambda _: None) is True and len(calls) == 2


# Helm's rules, reproduced ----------------------------------------------------------------

@pytest.mark.parametrize("rule,path,is_dir,ignored", [
    (".git/", ".git", True, True),
    (".git/", ".git", False, False),       # a directory rule never matches a file
    ("*.tmpl", "templates/a.tmpl", False, True),  # no slash: the base name
    ("tests/", "tests", True, True),
    ("templates/crds/README.md", "templates/crds/README.md", False, True),
    ("templates/crds/README.md", "README.md", False, False),
    ("/ci", "ci", True, True),
    ("*.txt", "templates/NOTES.txt", False, True),
    ("a/*", "a/b/c", False, False),         # '*' does not cross '/'
    ("x", "templates/.hidden", False, True),  # Helm's default rule templates/.?*
])
def test_helmignore(rule, path, is_dir, ignored):
    assert charts.HelmIgnore(rule).ignored(path, is_dir) is ignored


def test_lock_digest_is_helms():
    # mariadb-operator v0.38.1 deploy/charts/mariadb-operator: Chart.yaml and its Chart.lock.
    requested = [{"name": "mariadb-operator-crds", "version": "0.38.1", "condition": "crds.enabled",
                  "repository": "file://../mariadb-operator-crds"}]
    locked = [{"name": "mariadb-operator-crds", "repository": "file://../mariadb-operator-crds", "version": "0.38.1"}]
    assert charts.lock_digest(requested, locked) == \
        "sha256:0f2ff90b83955a060f581b7db4a0c746338ae3a50d9766877c346c7f61d74cde"


def test_external_secrets_crd_templates():
    bundle = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  annotations:\n"
              "    controller-gen.kubebuilder.io/version: v0.17.3\n  name: clustersecretstores.external-secrets.io\n"
              "spec:\n  group: external-secrets.io\n  names:\n    kind: ClusterSecretStore\n"
              "    singular: clustersecretstore\n  versions:\n  - name: v1\n---\n"
              "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  annotations: {}\n"
              "  name: externalsecrets.external-secrets.io\nspec:\n  group: external-secrets.io\n  names:\n"
              "    kind: ExternalSecret\n    singular: externalsecret\n  versions:\n  - name: v1\n")
    out = charts.eso_crd_templates(bundle)
    assert sorted(out) == ["templates/crds/clustersecretstore.yaml", "templates/crds/externalsecret.yaml"]
    store = out["templates/crds/clustersecretstore.yaml"].decode()
    assert store.startswith("{{- if and (.Values.installCRDs) (.Values.crds.createClusterSecretStore) }}\n")
    assert store.endswith("{{- end }}\n")
    assert "  annotations:\n    {{- with .Values.crds.annotations }}\n" in store
    assert out["templates/crds/externalsecret.yaml"].decode().startswith("{{- if .Values.installCRDs }}\n")


# Real charts -------------------------------------------------------------------------

def test_each_real_chart_records_its_provenance():
    entries = charts.real_entries()
    assert len({e["name"] for e in entries}) == len(entries)
    for entry in entries:
        assert re.fullmatch(r"[a-z0-9.\-/]+", entry["module"]) and entry["version"].startswith("v"), entry
        assert re.fullmatch(r"h1:[A-Za-z0-9+/]{43}=", entry["sum"]), entry
        assert entry["path"] and not entry["path"].startswith("/"), entry
        assert entry["release"] in charts.RELEASES and entry["release_notes"], entry
        assert entry["chart_version"] and entry["app_version"], entry
        assert set(entry["clusters"]) <= GROUPS, entry
    # The lab passes values to real charts only (the lab-made ones need none).
    assert set(charts.lab_values()) <= set(e["name"] for e in entries)


@pytest.mark.parametrize("entry", charts.real_entries(), ids=lambda e: e["name"])
def test_a_real_chart_is_where_its_provenance_says(entry):
    info = cached_module(entry["module"], entry["version"])
    assert info["Sum"] == entry["sum"]
    chart_yaml = yaml.safe_load(open(os.path.join(info["Dir"], entry["path"], "Chart.yaml")))
    assert chart_yaml["name"] == entry["name"]
    chart, created = charts.real_chart(entry, info)
    assert (chart.version, str(chart.metadata["appVersion"])) == (entry["chart_version"], entry["app_version"])
    assert created.year >= 2025
    assert charts.MADE_ANNOTATION not in (chart.metadata.get("annotations") or {})


def test_the_whole_repository(tmp_path):
    """Every chart built from the pinned modules: real ones at their versions, the vendored dependencies,
    two versions of each lab-made one, and a second build gives the same bytes."""
    first = charts.write_repository(charts.all_charts(module_info=cached_module, module_of=go_module_dir),
                                    tmp_path / "a")
    second = charts.write_repository(charts.all_charts(module_info=cached_module, module_of=go_module_dir),
                                     tmp_path / "b")
    assert (tmp_path / "a" / "index.yaml").read_bytes() == (tmp_path / "b" / "index.yaml").read_bytes()
    assert first == second
    entries = first["entries"]
    for entry in charts.real_entries():
        assert [v["version"] for v in entries[entry["name"]]] == [entry["chart_version"]]
    for name in charts.made_entries():
        assert [v["version"] for v in entries[name]] == made_versions(name)
    names = {m.name for m, _data in members((tmp_path / "a" / "rook-ceph-v1.17.9.tgz").read_bytes())}
    assert "rook-ceph/charts/library/Chart.yaml" in names
    mariadb = dict((m.name, d) for m, d in members((tmp_path / "a" / "mariadb-operator-0.38.1.tgz").read_bytes()))
    assert "mariadb-operator/charts/mariadb-operator-crds/templates/crds.yaml" in mariadb
    assert "mariadb-operator/Chart.lock" in mariadb  # it matches, so it stays
    eso = dict((m.name, d) for m, d in members((tmp_path / "a" / "external-secrets-0.16.2.tgz").read_bytes()))
    assert "external-secrets/Chart.lock" not in eso  # its oci:// dependency is dropped
    assert len([n for n in eso if n.startswith("external-secrets/templates/crds/") and n.endswith(".yaml")]) == 20
    assert "dependencies" not in yaml.safe_load(eso["external-secrets/Chart.yaml"])
    rook_values = dict((m.name, d) for m, d in members((tmp_path / "a" / "rook-ceph-v1.17.9.tgz").read_bytes()))
    assert b"master" not in rook_values["rook-ceph/values.yaml"]
    json.dumps(first)  # plain data
