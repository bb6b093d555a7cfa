# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator table of phase 3 (providers/flux.py): validation, selection, order and manifests."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import flux, gardener

from test_mappings import LazyDict  # pylint: disable=import-error

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, "roles", "infra_operators", "defaults", "main.yml")))
TABLE = DEFAULTS["infra_operators_table"]
REPOSITORIES = DEFAULTS["infra_operators_repositories"]
REPOS = {"r": {"url": "https://charts.example.org"}}


def entry(name, **fields):
    base = {"name": name, "chart": name, "version": "1.0.0", "repository": "r", "namespace": "ns", "groups": ["g"]}
    base.update(fields)
    return base


def problems_of(table, overrides=None, repositories=None):
    with pytest.raises(InputError) as caught:
        flux.validated_table(table, overrides or {}, REPOS if repositories is None else repositories)
    return caught.value.problems


def test_the_shipped_table_is_valid_exact_and_covers_every_cluster_kind():
    table = flux.validated_table(TABLE, {}, REPOSITORIES)
    for item in table:
        assert flux.is_exact_version(item["version"]), item["name"]
    names = dict((g, [e["name"] for e in flux.releases_for(table, [g])])
                 for g in ("management", "control_plane", "hypervisor_pools", "storage_pools"))
    for name in ("cert-manager", "external-secrets", "mariadb-operator", "rabbitmq-cluster-operator",
                 "rabbitmq-messaging-topology-operator", "valkey-operator", "memcached-operator",
                 "openstack-resource-controller", "c5c3-operator", "keystone-operator", "ovn-operator"):
        assert name in names["control_plane"]
    assert {"rook-ceph", "external-arbiter-operator", "prysm"} <= set(names["storage_pools"])
    assert {"openstack-hypervisor-operator", "labels-injector", "ovn-agents"} <= set(names["hypervisor_pools"])
    assert "external-secrets" in names["management"]


def test_every_bad_entry_is_named_together():
    table = [entry("a", depends_on=["ghost"]), entry("a"), entry("b", version=""), entry("c", repository="nope"),
             entry("d", crds="Always"), entry("e", version="latest"), entry("Bad_Name"), entry("f", colour="red")]
    found = problems_of(table)
    assert "operators.a: is defined 2 times" in found
    assert "operators.a.depends_on: 'ghost' is not an enabled release of the table" in found
    assert "operators.b.version: is required: pin the chart version" in found
    assert any(p.startswith("operators.c.repository: 'nope' is not a repository") for p in found)
    assert any(p.startswith("operators.d.crds: 'Always' is not one of") for p in found)
    assert "operators.e.version: 'latest' is neither a version nor a semver range" in found
    assert any(p.startswith("operators.Bad_Name.name:") for p in found)
    assert any(p.startswith("operators.f.colour: is not a field") for p in found)


def test_cycles_and_dependencies_on_other_clusters_are_refused():
    found = problems_of([entry("a", depends_on=["b"]), entry("b", depends_on=["a"])])
    assert found == ["operators.a.depends_on: forms a cycle: a -> b -> a"]
    found = problems_of([entry("a", depends_on=["b"], groups=["g", "h"]), entry("b")])
    assert found == ["operators.a.depends_on: 'b' is not installed on h, where a is"]
    found = problems_of([entry("a", depends_on=["b"]), entry("b", enabled=False)])
    assert found == ["operators.a.depends_on: 'b' is not an enabled release of the table"]


def test_repositories_are_checked():
    bad = {"r": {"url": "ftp://x"}, "o": {"url": "oci://x"}, "p": {"url": "https://x", "type": "oci"}}
    found = problems_of([entry("a")], repositories=bad)
    assert "helm_repositories.r.url: 'ftp://x' is not an http(s):// or oci:// URL" in found
    assert "helm_repositories.o.type: must be oci exactly when the url is oci://" in found
    assert "helm_repositories.p.type: must be oci exactly when the url is oci://" in found


@pytest.mark.parametrize("version", ["1.2.3", "v1.17.9", ">=0.1.0", ">=1.0.0 <2.0.0", "~1.2", "^1.2.3", "1.x",
                                     ">=1.0.0, <2.0.0", "1.2.3-rc.1", "1.0.0 - 1.4.0", "<1.0.0 || >=2.0.0"])
def test_versions_and_ranges_are_accepted(version):
    assert flux.validated_table([entry("a", version=version)], {}, REPOS)[0]["version"] == version


def test_overrides_merge_by_name_disable_and_add():
    table = [entry("a", values={"x": {"y": 1, "z": 2}}), entry("b")]
    merged = flux.validated_table(table, {"a": {"version": "1.1.0", "values": {"x": {"z": 3}}},
                                          "b": {"enabled": False}, "c": entry("c")}, REPOS)
    assert [(e["name"], e["version"]) for e in merged] == [("a", "1.1.0"), ("c", "1.0.0")]
    assert merged[0]["values"] == {"x": {"y": 1, "z": 3}}
    assert table[0]["version"] == "1.0.0"  # the shipped table is left alone


def test_releases_for_a_cluster_come_in_dependency_order():
    table = flux.validated_table([entry("app", depends_on=["crds", "db"]), entry("db", depends_on=["crds"]),
                                  entry("crds"), entry("other", groups=["h"])], {}, REPOS)
    assert [e["name"] for e in flux.releases_for(table, ["g"])] == ["crds", "db", "app"]
    assert [e["name"] for e in flux.releases_for(table, ["h"])] == ["other"]


def test_manifests_follow_the_seed():
    table = [entry("crds", namespace="ops"), entry("app", depends_on=["crds"], values={"replicas": 2})]
    table = flux.validated_table(table, {}, REPOS)
    objects = flux.manifests(flux.releases_for(table, ["g"]), REPOS, helm_wait=False)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert kinds == [("Namespace", "ns"), ("Namespace", "ops"), ("HelmRepository", "r"),
                     ("HelmRelease", "crds"), ("HelmRelease", "app")]
    repo, release = objects[2], objects[4]
    assert repo["metadata"]["namespace"] == "flux-system" and repo["spec"]["url"] == "https://charts.example.org"
    assert release["apiVersion"] == "helm.toolkit.fluxcd.io/v2"
    assert release["spec"]["chart"]["spec"] == {"chart": "app", "version": "1.0.0", "sourceRef": {
        "kind": "HelmRepository", "name": "r", "namespace": "flux-system"}}
    assert release["spec"]["dependsOn"] == [{"name": "crds", "namespace": "ops"}]
    assert release["spec"]["install"] == {"crds": "CreateReplace", "disableWait": True}
    assert release["spec"]["upgrade"] == {"crds": "CreateReplace", "disableWait": True}
    assert release["spec"]["values"] == {"replicas": 2}
    waiting = flux.manifests(flux.releases_for(table, ["g"]), REPOS)[-1]
    assert "disableWait" not in waiting["spec"]["install"]


def lazy(value):
    if isinstance(value, dict):
        return LazyDict((key, lazy(item)) for key, item in value.items())
    if isinstance(value, list):
        return [lazy(item) for item in value]
    return value


def test_a_filters_lazy_table_overrides_and_values_are_copied_by_their_data():
    overrides = {"app": {"values": {"replicas": 3}}, "extra": entry("extra", values={"a": {"b": 1}})}
    table = [entry("crds"), entry("app", depends_on=["crds"], values={"replicas": 2, "nested": {"x": 1}})]
    expected = flux.validated_table(table, overrides, REPOS)
    merged = flux.validated_table(lazy(table), lazy(overrides), lazy(REPOS))
    assert merged == expected
    objects = flux.manifests(flux.releases_for(lazy(expected), ["g"]), REPOS)
    values = dict((o["metadata"]["name"], o["spec"].get("values")) for o in objects if o["kind"] == "HelmRelease")
    assert values == {"crds": None, "app": {"replicas": 3, "nested": {"x": 1}}, "extra": {"a": {"b": 1}}}


def test_version_changes_and_what_waits_behind_a_release():
    table = flux.validated_table([entry("crds"), entry("app", depends_on=["crds"]), entry("top", depends_on=["app"])],
                                 {}, REPOS)
    releases = [o for o in flux.manifests(table, REPOS) if o["kind"] == "HelmRelease"]
    live = {("ns", "crds"): {"spec": {"chart": {"spec": {"version": "0.9.0"}}},
                             "status": {"history": [{"chartVersion": "0.9.0"}]}},
            ("ns", "app"): {"spec": {"chart": {"spec": {"version": "1.0.0"}}}}}
    assert flux.version_changes(releases, live) == [{"name": "crds", "namespace": "ns", "chart": "crds",
                                                     "from": "0.9.0", "to": "1.0.0", "installed": "0.9.0"}]
    assert flux.waiting_behind(releases[0], releases) == ["app", "top"]
    assert flux.waiting_behind(releases[2], releases) == []
    assert flux.helm_chart_name(releases[1]) == ("flux-system", "ns-app")


def test_shoots_declare_the_shoot_flux_extension():
    settings = {"project": "p", "cloud_profile": "cp", "credentials_binding": "cb", "provider_type": "lab",
                "machine_image": {"name": "gardenlinux"}}
    region = {"name": "r", "control_planes": [{"name": "cp1", "ironcore": {"machine_class": "m"}}]}
    spec = gardener.shoots(region, settings)[0]["spec"]
    assert spec["extensions"] == [{"type": "shoot-flux", "providerConfig": {
        "apiVersion": "flux.extensions.gardener.cloud/v1alpha1", "kind": "FluxConfig",
        "flux": {"namespace": "flux-system"}}}]
    pinned = gardener.shoots(region, dict(settings, flux={"version": "v2.7.3"}))[0]["spec"]
    assert pinned["extensions"][0]["providerConfig"]["flux"] == {"namespace": "flux-system", "version": "v2.7.3"}
    assert "extensions" not in gardener.shoots(region, dict(settings, flux=False))[0]["spec"]
    with pytest.raises(InputError) as caught:
        gardener.shoots(region, dict(settings, flux="yes"))
    assert caught.value.problems == ["gardener.flux: must be a mapping (version, registry, namespace) or false"]


def test_exact_version_pattern():
    assert all(flux.is_exact_version(v) for v in ("1.0.0", "v1.17.9", "0.1.0-lab.1"))
    assert not any(flux.is_exact_version(v) for v in (">=0.1.0", "1.x", "1.0", "latest"))


def test_the_operator_releases_filter_is_the_modules_selection():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.c5c3.cobaltcore.plugins.filter.cobaltcore import FilterModule
    select = FilterModule().filters()["operator_releases"]
    names = [e["name"] for e in select(TABLE, ["storage_pools"], repositories=REPOSITORIES,
                                       overrides={"prysm": {"enabled": False}})]
    assert names == ["rook-ceph", "external-arbiter-operator"]
    with pytest.raises(AnsibleFilterError) as caught:
        select(TABLE, ["storage_pools"], repositories=REPOSITORIES, overrides={"prysm": {"version": ""}})
    assert "operators.prysm.version: is required" in str(caught.value)


@pytest.mark.parametrize("version,constraint,expected", [
    ("0.1.0", ">=0.1.1", False), ("0.1.1", ">=0.1.1", True), ("0.1.0", "0.1.x", True), ("0.2.0", "0.1.x", False),
    ("1.2.3", "~1.2.0", True), ("1.3.0", "~1.2.0", False), ("1.9.0", "^1.2.0", True), ("2.0.0", "^1.2.0", False),
    ("0.2.5", "^0.2.1", True), ("0.3.0", "^0.2.1", False), ("1.2.0", ">1.1", True), ("1.1.9", ">1.1", False),
    ("1.1.9", "<=1.1", True), ("1.2.0", "<=1.1", False), ("1.4.2", "1.2 - 1.4", True), ("1.5.0", "1.2 - 1.4", False),
    ("0.1.0", ">=0.1.0, <0.2.0", True), ("0.2.0", ">=0.1.0, <0.2.0", False), ("0.2.0", "0.1.x || 0.2.x", True),
    ("1.0.0-rc.1", "<1.0.0", True), ("1.0.0", "=1.0.0", True), ("1.0.0", "!=1.0.0", False), ("v3.0.0", "*", True),
])
def test_satisfies_as_masterminds_semver(version, constraint, expected):
    assert flux.satisfies(version, constraint) is expected


def test_upgrade_from_is_a_range_and_judges_only_a_change_from_an_installed_version():
    entry = {"name": "op", "chart": "op", "version": "2.0.0", "repository": "lab", "namespace": "ops",
             "upgrade_from": "not a range"}
    with pytest.raises(InputError) as error:
        flux.validated_table([entry], {}, {"lab": {"url": "http://x"}})
    assert error.value.problems == ["operators.op.upgrade_from: 'not a range' is not a semver range"]
    entries = [dict(entry, upgrade_from=">=1.5.0")]
    change = {"name": "op", "namespace": "ops", "chart": "op", "from": "1.0.0", "to": "2.0.0"}
    assert flux.upgrade_problems([dict(change, installed="1.5.1")], entries) == []
    assert flux.upgrade_problems([dict(change, installed=None)], entries) == []  # never installed: an install
    (found,) = flux.upgrade_problems([dict(change, installed="1.0.0")], entries)
    assert "chart op 1.0.0 cannot move to 2.0.0 in one step (upgrade_from >=1.5.0)" in found


def helm_release(namespace, name, depends_on=()):
    return {"metadata": {"namespace": namespace, "name": name},
            "spec": {"dependsOn": [dict(d) for d in depends_on]}}


def test_releases_the_table_no_longer_gives_the_cluster_go_dependents_first():
    entries = [{"namespace": "cert-manager", "name": "cert-manager"}]
    live = [helm_release("cert-manager", "cert-manager"),
            helm_release("mariadb-operator", "mariadb-operator-crds"),
            helm_release("mariadb-operator", "mariadb-operator", [{"name": "mariadb-operator-crds"}]),
            helm_release("rabbitmq-system", "topology", [{"name": "cert-manager", "namespace": "cert-manager"}])]
    # Rounds: what no unwanted release depends on, by name; then what those depended on.
    assert flux.unwanted_releases(live, entries) == [
        ("mariadb-operator", "mariadb-operator", [("mariadb-operator", "mariadb-operator-crds")]),
        ("rabbitmq-system", "topology", [("cert-manager", "cert-manager")]),
        ("mariadb-operator", "mariadb-operator-crds", [])]
    assert flux.unwanted_releases(live[:1], entries) == []
    assert flux.release_objects_selector("ns", "r") == "helm.toolkit.fluxcd.io/name=r,helm.toolkit.fluxcd.io/namespace=ns"
