# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""report/drift.py and plugin_utils/drift.py: drift.yml's task records composed into the region's drift report."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import json

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.filter.report import run_records
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import drift
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.report import render_html, render_markdown
from ansible_collections.c5c3.cobaltcore.plugins.plugin_utils import drift as recorder

CM = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "openstack"}
HR = {"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "namespace": "flux-system"}
LABELS = {"app.kubernetes.io/managed-by": "c5c3.cobaltcore"}


def _live(ref, name, labels=None):
    return {"apiVersion": ref["apiVersion"], "kind": ref["kind"],
            "metadata": {"name": name, "namespace": ref.get("namespace"), "labels": dict(LABELS, **(labels or {}))}}


def _records():
    values = {"apiVersion": HR["apiVersion"], "kind": "HelmRelease", "namespace": "flux-system", "name": "rook",
              "result": "unchanged",
              "foreign": [{"field": "spec.values.debug", "managers": ["kubectl-edit"], "live": True}]}
    return [
        {"task": "Install the operators", "cluster": "st-pool-a", "changed": False,
         "declared": [dict(HR, name="rook"), dict(HR, name="prysm")], "drift": [values]},
        {"task": "Apply the ControlPlane", "cluster": "lab-control-plane", "changed": True,
         "declared": [dict(CM, name="a"), dict(CM, name="b")],
         "drift": [dict(CM, name="a", result="configured",
                        fields=[{"field": "data.replicas", "declared": "3", "live": "1"}]),
                   dict(CM, name="b", result="created", missing=True)]},
        # The same object from a second task: one entry, both tasks.
        {"task": "Check the ControlPlane again", "cluster": "lab-control-plane", "changed": True,
         "declared": [dict(CM, name="a")],
         "drift": [dict(CM, name="a", result="configured",
                        fields=[{"field": "data.replicas", "declared": "3", "live": "1"}])]},
        {"task": "Prune the releases", "cluster": "st-pool-a", "changed": True, "declared": [],
         "drift": [dict(HR, name="old", result="deleted", undeclared=True)]},
        {"task": "Assign the Keystone roles", "cluster": "lab-control-plane", "changed": True, "declared": [],
         "drift": []},
        {"task": "Read the BMCs", "cluster": "baremetal", "changed": False, "failed": True, "msg": "no route",
         "declared": [], "drift": []},
    ]


def _managed():
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "cobaltcore-run-lab", "namespace": "kube-system", "labels": LABELS}}
    backup = {"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "Backup",
              "metadata": {"name": "mariadb-pre-2026.1", "namespace": "openstack",
                           "labels": dict(LABELS, **{"c5c3.io/backup": "on-demand"})}}
    scheduled = {"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "Backup",
                 "metadata": {"name": "mariadb-scheduled", "namespace": "gone",
                              "labels": dict(LABELS, **{"c5c3.io/backup": "scheduled"})}}
    return {"lab-control-plane": [_live(CM, "a"), _live(CM, "left-behind"), lease, backup, scheduled],
            "st-pool-a": [_live(HR, "rook"), _live(HR, "prysm")]}


def test_the_report_merges_the_tasks_findings_per_cluster_and_object():
    report = drift.compose("lab", _records(), _managed(), run_records())
    clusters = dict((c["name"], c) for c in report["clusters"])
    assert sorted(clusters) == ["baremetal", "lab-control-plane", "st-pool-a"]
    cp = clusters["lab-control-plane"]
    assert [o["object"] for o in cp["objects"]] == ["ConfigMap openstack/a", "ConfigMap openstack/b"]
    changed, missing = cp["objects"]
    assert changed["fields"] == [{"field": "data.replicas", "declared": "3", "live": "1"}]
    assert changed["tasks"] == ["Apply the ControlPlane", "Check the ControlPlane again"]
    assert missing["missing"] and not missing["fields"]
    # Found by the label, declared by nothing; the run lock and an on-demand Backup are a run's records.
    assert [o["object"] for o in cp["undeclared"]] == ["Backup gone/mariadb-scheduled", "ConfigMap openstack/left-behind"]
    assert cp["changes"] == [{"task": "Assign the Keystone roles"}]
    pool = clusters["st-pool-a"]
    assert [(o["object"], bool(o["foreign"]), o["undeclared"]) for o in pool["objects"]] == [
        ("HelmRelease flux-system/old", False, True), ("HelmRelease flux-system/rook", True, False)]
    assert clusters["baremetal"]["failures"] == [{"task": "Read the BMCs", "msg": "no route"}]
    assert report["summary"] == {"objects": 4, "missing": 1, "fields": 1, "foreign": 1, "undeclared": 3,
                                 "changes": 1, "failures": 1}
    assert report["drift"] is True


def test_a_region_as_declared_has_no_drift():
    records = [{"task": "Apply", "cluster": "c", "changed": False, "declared": [dict(CM, name="a")], "drift": []}]
    report = drift.compose("lab", records, {"c": [_live(CM, "a")]})
    assert report == {"region": "lab", "drift": False, "clusters": [], "summary": dict(
        (k, 0) for k in ("objects", "missing", "fields", "foreign", "undeclared", "changes", "failures"))}
    assert drift.summary_line(report).startswith("No drift")


def test_lines_markdown_and_the_region_reports_section_name_every_finding():
    report = drift.compose("lab", _records(), _managed(), run_records())
    lines = drift.report_lines(report)
    assert "lab-control-plane: ConfigMap openstack/a: data.replicas: declared 3, live 1" in lines
    assert "st-pool-a: HelmRelease flux-system/rook: spec.values.debug: set by kubectl-edit (live true), not declared" \
        in lines
    assert "lab-control-plane: ConfigMap openstack/left-behind: made by the collection, declared by nothing any more" \
        in lines
    assert "baremetal: Read the BMCs: could not be checked: no route" in lines
    markdown = "\n".join(drift.markdown_lines(report, render_markdown.cell))
    assert "### lab-control-plane" in markdown and "data.replicas: declared 3, live 1" in markdown
    page = render_html._drift({"drift": report})
    assert "spec.values.debug" in page and "left-behind" in page and 'data-cluster="st-pool-a"' in page
    assert render_html.NO_DRIFT_REPORT in render_html._drift({"drift": None})


def test_records_are_parsed_line_by_line_and_bad_input_is_named():
    texts = [json.dumps(r) + "\n" for r in _records()[:2]] + ["\n"]
    assert drift.parse_records(texts) == _records()[:2]
    with pytest.raises(InputError) as error:
        drift.parse_records(["{}\n{not json"])
    assert error.value.problems[0].startswith("file 0, line 2: not JSON")
    with pytest.raises(InputError) as error:
        drift.compose("lab", [{"cluster": "c"}, "x"], [])
    assert error.value.problems == [
        "records[0]: must be a task record (a mapping with task and cluster)",
        "records[1]: must be a task record (a mapping with task and cluster)",
        "managed: must map each cluster to the objects found by the managed-by label"]


def test_the_kinds_read_are_those_declared_on_the_cluster_and_failed_reads_find_nothing():
    kinds = drift.kinds_to_read(_records(), "st-pool-a")
    assert kinds == [{"api_version": HR["apiVersion"], "kind": "HelmRelease", "metadata_only": True,
                      "label_selector": "app.kubernetes.io/managed-by=c5c3.cobaltcore"}]
    reads = {"a": {"objects": [{"items": [_live(CM, "x")], "error": None}, {"items": [], "error": "forbidden"}]},
             "b": {"failed": True, "msg": "unreachable"}, "c": {"skipped": True}}
    assert drift.managed_of(reads) == {"a": [_live(CM, "x")], "b": [], "c": []}


def test_a_task_record_of_a_no_log_task_names_fields_without_values():
    found = {"declared": [dict(CM, name="a")], "drift": [dict(CM, name="a", result="configured",
             fields=[{"field": "data.password", "declared": "s3cr3t-new", "live": "s3cr3t-old"}],
             foreign=[{"field": "data.token", "managers": ["x"], "live": "t0k3n"}])]}
    clusters = {"kubeconfig": "cp"}
    (record,) = recorder.task_records("Write the password", "cp", clusters, {"changed": True}, found, no_log=True)
    assert record["drift"][0]["fields"] == [{"field": "data.password", "declared": "<redacted>", "live": "<redacted>"}]
    assert record["drift"][0]["foreign"][0]["live"] == "<redacted>"
    assert not [v for v in ("s3cr3t", "t0k3n") if v in json.dumps(record)]
    (shown,) = recorder.task_records("Write it", "cp", clusters, {"failed": True, "msg": "refused"}, found, False)
    assert shown["drift"][0]["fields"][0]["declared"] == "s3cr3t-new" and shown["msg"] == "refused"
    (hidden,) = recorder.task_records("Write it", "cp", clusters, {"failed": True, "msg": "refused x"}, found, True)
    assert hidden["msg"] is None


def test_objects_of_another_kubeconfig_option_are_the_records_of_that_cluster(tmp_path):
    path = tmp_path / "found.json"
    assert recorder.read_found(str(path)) == {"declared": [], "drift": []}
    path.write_text(json.dumps({"declared": [dict(CM, name="copy", via="target_kubeconfig")],
                                "drift": [dict(CM, name="copy", via="target_kubeconfig", result="created",
                                               missing=True)]}))
    found = recorder.read_found(str(path))
    assert recorder.options_of(found) == ["kubeconfig", "target_kubeconfig"]
    records = recorder.task_records("Copy the keys", "st-pool-a", {"kubeconfig": "st-pool-a", "target_kubeconfig": "cp"},
                                    {"changed": True}, found, no_log=False)
    assert [(r["cluster"], r["changed"], r["declared"]) for r in records] == [
        ("st-pool-a", False, []), ("cp", False, [dict(CM, name="copy")])]
    assert records[1]["drift"] == [dict(CM, name="copy", result="created", missing=True)]


def test_a_task_records_the_cluster_of_the_kubeconfig_it_used():
    kubeconfigs = {"management": "/k/management.yaml", "cp": "/k/cp.yaml"}
    assert recorder.cluster_of("/k/cp.yaml", "cp", kubeconfigs) == "cp"
    assert recorder.cluster_of("/k/management.yaml", "cp", kubeconfigs) == "management"
    assert recorder.cluster_of(None, "cp", kubeconfigs) == "cp"
    assert recorder.cluster_of("/elsewhere.yaml", "cp", kubeconfigs) == "cp (another kubeconfig)"


def test_records_are_appended_one_line_per_task(tmp_path):
    recorder.append(str(tmp_path), "cp", {"task": "a", "cluster": "cp"})
    recorder.append(str(tmp_path), "cp", {"task": "b", "cluster": "cp"})
    assert drift.parse_records([(tmp_path / "cp.jsonl").read_text()]) == [
        {"task": "a", "cluster": "cp"}, {"task": "b", "cluster": "cp"}]
