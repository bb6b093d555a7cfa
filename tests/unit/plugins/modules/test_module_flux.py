# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flux_releases: Flux's presence, one batch, the wait with Flux's own failures, version changes."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import datetime

import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import connection
from ansible_collections.c5c3.cobaltcore.plugins.modules import flux_releases

from module_harness import run_module
from module_harness import kube  # noqa: F401  # pylint: disable=unused-import

SOURCE = "source.toolkit.fluxcd.io/v1"
HELM = "helm.toolkit.fluxcd.io/v2"
REPOS = {"lab": {"url": "http://127.0.0.1:8879"}}
TABLE = [
    {"name": "crds", "chart": "crds", "version": "1.0.0", "repository": "lab", "namespace": "ops", "groups": ["g"]},
    {"name": "operator", "chart": "operator", "version": "1.0.0", "repository": "lab", "namespace": "ops",
     "groups": ["g"], "depends_on": ["crds"]},
    {"name": "elsewhere", "chart": "x", "version": "1.0.0", "repository": "lab", "namespace": "x", "groups": ["h"]},
]
ARGS = {"cluster": "st-pool-a", "groups": ["g"], "operators": TABLE, "repositories": REPOS, "wait_sleep": 0,
        "wait_timeout": 2}


def stamp(seconds_ago=0):
    at = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=seconds_ago)
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture
def flux(kube):
    kube.kinds.update({
        (SOURCE, "HelmRepository"): ("helmrepositories", True), (SOURCE, "HelmChart"): ("helmcharts", True),
        (HELM, "HelmRelease"): ("helmreleases", True), ("coordination.k8s.io/v1", "Lease"): ("leases", True)})
    for name in ("source-controller-leader-election", "helm-controller-leader-election"):
        kube.add({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                  "metadata": {"name": name, "namespace": "flux-system"},
                  "spec": {"holderIdentity": name + "_1", "leaseDurationSeconds": 35, "renewTime": stamp()}})
    return kube


def settle(kube, failing=None, chart_failure=None):
    """Play helm-controller: every HelmRelease Ready for its generation (or failed as asked)."""
    for (api_version, kind, namespace, name), obj in list(kube.objects.items()):
        if kind != "HelmRelease":
            continue
        generation = obj["metadata"].setdefault("generation", 1)
        version = obj["spec"]["chart"]["spec"]["version"]
        cond = {"type": "Ready", "status": "True", "reason": "InstallSucceeded", "observedGeneration": generation,
                "message": "Helm install succeeded"}
        if name == failing:
            cond = dict(cond, status="False", reason="InstallFailed", message="Helm install failed: boom")
            obj["status"] = {"observedGeneration": generation, "conditions": [cond, dict(
                cond, type="Stalled", status="True", reason="RetriesExceeded", message="Failed to install after 1 attempt")]}
            continue
        if name == chart_failure:
            cond = dict(cond, status="False", reason="ArtifactFailed", message="HelmChart 'flux-system/ops-%s' is not ready" % name)
            kube.add({"apiVersion": SOURCE, "kind": "HelmChart",
                      "metadata": {"name": "%s-%s" % (namespace, name), "namespace": "flux-system", "generation": 2},
                      "spec": {"version": version}, "status": {"observedGeneration": 2, "conditions": [dict(
                          type=kind, status=status, reason="InvalidChartReference",
                          message="invalid chart reference: failed to get chart version for remote reference: "
                          "no '%s' chart with version matching '%s' found" % (name, version))
                          for kind, status in (("Stalled", "True"), ("Ready", "False"), ("FetchFailed", "True"))]}})
        obj["status"] = {"observedGeneration": generation, "conditions": [cond],
                         "history": [{"chartVersion": version, "version": 1}]}


def with_controller(kube, monkeypatch, **how):
    """Settle the releases whenever the module reads them, as a running helm-controller would."""
    original = kube.client

    def client(auth, **options):
        real = original(auth, **options)
        listing = real.list

        def list_and_settle(rtype, namespace=None, **kwargs):
            if rtype.kind == "HelmRelease":
                settle(kube, **how)
            return listing(rtype, namespace, **kwargs)
        real.list = list_and_settle
        getter = real.get

        def get_and_settle(rtype, name, namespace=None):
            if rtype.kind == "HelmRelease":
                settle(kube, **how)
            return getter(rtype, name, namespace)
        real.get = get_and_settle
        return real
    monkeypatch.setattr(connection, "KubeClient", client)


def test_first_run_installs_the_groups_releases_then_a_rerun_changes_nothing(flux, monkeypatch):
    with_controller(flux, monkeypatch)
    result, _text = run_module(flux_releases.main, ARGS)
    assert result["changed"]
    assert [(r["name"], r["result"], r["installed_version"]) for r in result["releases"]] == [
        ("crds", "created", "1.0.0"), ("operator", "created", "1.0.0")]
    assert flux.find(HELM, "HelmRelease", "elsewhere", "x") is None
    assert flux.find(SOURCE, "HelmRepository", "lab", "flux-system")["spec"]["url"] == REPOS["lab"]["url"]
    assert flux.find(HELM, "HelmRelease", "operator", "ops")["spec"]["dependsOn"] == [{"name": "crds", "namespace": "ops"}]
    assert sorted(result["flux"]["leases"]) == ["helm-controller-leader-election", "source-controller-leader-election"]
    result, _text = run_module(flux_releases.main, ARGS)
    assert not result["changed"] and result["version_changes"] == []


def test_a_version_bump_is_reported_in_check_mode_with_its_diff(flux, monkeypatch):
    with_controller(flux, monkeypatch)
    run_module(flux_releases.main, ARGS)
    bumped = dict(ARGS, overrides={"operator": {"version": "1.1.0"}})
    result, _text = run_module(flux_releases.main, bumped, check_mode=True, diff=True)
    assert result["changed"]
    assert result["version_changes"] == [{"name": "operator", "namespace": "ops", "chart": "operator", "from": "1.0.0",
                                          "to": "1.1.0", "installed": "1.0.0"}]
    assert any("1.1.0" in str(d.get("after")) for d in result["diff"])
    assert flux.find(HELM, "HelmRelease", "operator", "ops")["spec"]["chart"]["spec"]["version"] == "1.0.0"


def test_a_version_its_upgrade_from_refuses_is_named_before_any_write(flux, monkeypatch):
    with_controller(flux, monkeypatch)
    run_module(flux_releases.main, ARGS)
    flux.calls[:] = []
    jump = dict(ARGS, overrides={"operator": {"version": "2.0.0", "upgrade_from": ">=1.1.0"}})
    result, _text = run_module(flux_releases.main, jump)
    assert result["failed"] and result["problems"] == [
        "operators.operator.upgrade_from: chart operator 1.0.0 cannot move to 2.0.0 in one step (upgrade_from "
        ">=1.1.0): pin a version between them first"]
    assert not [c for c in flux.calls if c[0] in ("PATCH", "POST", "PUT", "DELETE")]
    step = dict(ARGS, overrides={"operator": {"version": "1.1.0", "upgrade_from": "1.0.x"}})
    result, _text = run_module(flux_releases.main, step)
    assert result["changed"] and not result.get("failed")
    assert flux.find(HELM, "HelmRelease", "operator", "ops")["spec"]["chart"]["spec"]["version"] == "1.1.0"


def test_a_stalled_release_fails_at_once_naming_cluster_release_chart_and_what_waits(flux, monkeypatch):
    with_controller(flux, monkeypatch, failing="crds")
    result, _text = run_module(flux_releases.main, dict(ARGS, wait_timeout=30))
    assert result["failed"]
    assert result["msg"].startswith("st-pool-a: HelmRelease ops/crds (chart crds 1.0.0) failed: ")
    assert "Stalled is True" in result["msg"] and "RetriesExceeded" in result["msg"]
    assert "waiting behind it: operator" in result["msg"]


def test_a_chart_version_the_repository_lacks_fails_with_source_controllers_message(flux, monkeypatch):
    with_controller(flux, monkeypatch, chart_failure="operator")
    result, _text = run_module(flux_releases.main, dict(ARGS, wait_timeout=30))
    assert result["failed"]
    assert result["msg"].startswith("st-pool-a: HelmRelease ops/operator (chart operator 1.0.0) failed: "
                                    "HelmChart flux-system/ops-operator: InvalidChartReference: invalid chart reference")


def test_without_flux_nothing_is_written_and_the_message_says_what_is_missing(flux):
    lease = flux.find("coordination.k8s.io/v1", "Lease", "helm-controller-leader-election", "flux-system")
    lease["spec"]["renewTime"] = stamp(600)
    result, _text = run_module(flux_releases.main, ARGS)
    assert result["failed"]
    assert result["msg"].startswith("st-pool-a: Flux does not run: Lease flux-system/helm-controller-leader-election "
                                    "was last renewed at ")
    assert not [c for c in flux.calls if c[0] == "PATCH"]


def test_no_flux_crds(kube):
    result, _text = run_module(flux_releases.main, ARGS)
    assert result["failed"] and "helm.toolkit.fluxcd.io/v2 HelmRelease is not served" in result["msg"]


def test_a_bad_table_fails_before_any_request(flux):
    result, _text = run_module(flux_releases.main, dict(ARGS, overrides={"operator": {"depends_on": ["ghost"]}}))
    assert result["failed"] and result["msg"].startswith("invalid input, nothing was changed: ")
    assert result["problems"] == ["operators.operator.depends_on: 'ghost' is not an enabled release of the table"]
    assert flux.calls == []


CRD = "apiextensions.k8s.io/v1"


def crd_of(kube, release, kind, group="example.com"):
    """A CRD helm-controller installed with release (its labels), serving kind in group/v1."""
    kube.kinds[(CRD, "CustomResourceDefinition")] = ("customresourcedefinitions", False)
    kube.kinds[("%s/v1" % group, kind)] = (kind.lower() + "s", True)
    kube.add({"apiVersion": CRD, "kind": "CustomResourceDefinition",
              "metadata": {"name": "%ss.%s" % (kind.lower(), group), "labels": {
                  "helm.toolkit.fluxcd.io/name": release, "helm.toolkit.fluxcd.io/namespace": "ops"}},
              "spec": {"group": group, "names": {"kind": kind}, "versions": [{"name": "v1", "storage": True}]}})


def test_a_release_the_table_drops_is_uninstalled_unless_objects_of_its_kinds_are_left(flux, monkeypatch):
    with_controller(flux, monkeypatch)
    result, _text = run_module(flux_releases.main, ARGS)
    assert not result.get("failed") and result["pruned"] == []
    crd_of(flux, "crds", "Widget")
    flux.add({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "apps"}})
    # The operator (no CRDs of its own) and its CRDs dropped: the Widget of the CRDs' kind is left for both.
    result, _text = run_module(flux_releases.main, dict(ARGS, operators=TABLE[2:]))
    assert result["failed"] and "HelmRelease ops/operator is no longer in the operator table, but objects of its " \
        "kinds are left (delete them first): Widget apps/w1" in result["msg"]
    assert "HelmRelease ops/crds is no longer" in result["msg"]
    assert flux.find(HELM, "HelmRelease", "operator", "ops") is not None
    result, _text = run_module(flux_releases.main, dict(ARGS, operators=TABLE[:1] + TABLE[2:]), check_mode=True)
    assert result["failed"] and "HelmRelease ops/operator is no longer" in result["msg"]  # the operator's, through crds
    del flux.objects[("example.com/v1", "Widget", "apps", "w1")]
    result, _text = run_module(flux_releases.main, dict(ARGS, operators=TABLE[:1] + TABLE[2:]), check_mode=True)
    assert result["pruned"] == ["ops/operator"] and flux.find(HELM, "HelmRelease", "operator", "ops") is not None
    result, _text = run_module(flux_releases.main, dict(ARGS, operators=TABLE[:1] + TABLE[2:]))
    assert result["changed"] and result["pruned"] == ["ops/operator"]
    assert flux.find(HELM, "HelmRelease", "operator", "ops") is None and flux.find(HELM, "HelmRelease", "crds", "ops")
    result, _text = run_module(flux_releases.main, dict(ARGS, operators=TABLE[:1] + TABLE[2:]))
    assert not result["changed"] and result["pruned"] == []
