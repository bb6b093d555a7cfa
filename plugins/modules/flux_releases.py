#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: flux_releases
short_description: Install a cluster's operators with Flux HelmReleases from one table, and wait for them together
version_added: 0.5.0
description:
  - Validates the whole operator table (O(operators) merged with O(overrides)) and O(repositories) before
    anything is written, naming every bad entry together (an unknown or cyclic C(depends_on), a duplicate
    name, a chart without a version, an unknown repository, ...).
  - Checks that Flux runs on the cluster - its C(HelmRepository) and C(HelmRelease) kinds are served and
    its source-controller and helm-controller hold fresh leader-election Leases in O(flux_namespace) -
    waiting up to O(flux_timeout) seconds for it (a Shoot gets Flux from Gardener's C(shoot-flux)
    extension while it reconciles); fails with what is missing otherwise.
  - Applies, in one batch, the target Namespaces, the C(HelmRepository) objects the cluster's releases use
    and one C(HelmRelease) (C(helm.toolkit.fluxcd.io/v2)) per release of the cluster's inventory groups.
  - Waits for all releases together (C(Ready=True) for the current generation and not C(Reconciling));
    Flux installs them in C(dependsOn) order. A release that Flux gives up on (C(Stalled=True), e.g.
    C(InstallFailed) once its retries are spent) or whose chart version its repository does not have
    fails the call at once with Flux's own reason and message, naming the cluster, the release, the chart
    and its version, and the releases waiting behind it.
  - Reports the releases whose pinned version changes (an upgrade), also in check mode.
  - With O(prune), the HelmReleases the collection made on the cluster (its C(app.kubernetes.io/managed-by) label)
    that the table no longer gives it (removed, C(enabled=false), or its groups changed) are deleted after the
    others are ready - Flux uninstalls each, dependents first - and waited for until gone. Before anything is
    written, a release whose kinds still have objects is refused, naming them - the kinds of the CRDs helm-controller
    installed with it (label C(helm.toolkit.fluxcd.io/name)), or for a release without CRDs of its own (a controller
    whose CRDs come in a chart of their own) those of the releases it depends on.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Server-side dry runs; reports the version changes; writes and waits for nothing.
    support: full
  diff_mode:
    description: Field-level diff of every object, the chart version of an upgrade included.
    support: full
options:
  cluster:
    description: The cluster's name in messages (the inventory host).
    type: str
    required: true
  groups:
    description: The cluster's inventory groups; it gets the releases whose C(groups) meet these.
    type: list
    elements: str
    required: true
  operators:
    description:
      - The operator table, one entry per Helm release. Each entry has C(name) (the HelmRelease and Helm
        release name), C(chart), C(version) (exact, or a semver range such as C(>=0.1.0)), C(repository)
        (a key of O(repositories)), C(namespace) (where the HelmRelease, its Helm release record and its
        objects go), C(groups) (the inventory groups whose clusters get it), and optionally C(values),
        C(depends_on) (release names installed on the same clusters), C(crds) (C(Skip), C(Create) or
        C(CreateReplace), the default), C(enabled), C(interval), C(timeout) and C(upgrade_from) (a semver range
        the installed chart version must meet for a move to C(version); a release whose installed version does
        not is refused before any write).
      - C(values) are not secret (they appear in the HelmRelease); keep credentials in Secrets.
    type: list
    elements: dict
    required: true
  overrides:
    description:
      - A region's changes to O(operators), by release name; fields replace the table's, C(values) are
        merged deeply, C(enabled=false) drops a release. A name the table lacks adds a release.
    type: dict
    default: {}
  repositories:
    description:
      - Helm repositories by name, each with C(url) (C(https://), or C(oci://) with C(type=oci)),
        optionally C(interval) and C(type).
    type: dict
    required: true
  flux_namespace:
    description: Where Flux runs and the C(HelmRepository) objects go.
    type: str
    default: flux-system
  flux_timeout:
    description: Seconds to wait for Flux to run on the cluster; C(0) checks once.
    type: int
    default: 0
  helm_wait:
    description:
      - Let Helm wait for each release's workloads to become ready (C(disableWait) when false). Only a cluster
        where nothing can run (the local lab) turns it off.
    type: bool
    default: true
  prune:
    description: Uninstall the collection's releases the table no longer gives the cluster (see above).
    type: bool
    default: true
  wait:
    description: Wait until every release is ready.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for all releases together.
    type: int
    default: 900
  wait_sleep:
    description: Longest pause in seconds between two checks, while waiting for Flux and for the releases.
    type: int
    default: 5
"""

EXAMPLES = r"""
- name: The operators of this cluster, installed by Flux
  c5c3.cobaltcore.flux_releases:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    cluster: "{{ inventory_hostname }}"
    groups: "{{ group_names }}"
    operators:
      - name: rook-ceph
        chart: rook-ceph
        version: v1.17.9
        repository: rook
        namespace: rook-ceph
        groups: [storage_pools]
        values: {crds: {enabled: true}}
    repositories:
      rook: {url: https://charts.rook.io/release}
    overrides:
      rook-ceph: {values: {enableDiscoveryDaemon: false}}
    flux_timeout: 600
"""

RETURN = r"""
pruned:
  description: The releases uninstalled (in check mode - to uninstall), C(<namespace>/<name>), dependents first.
  returned: always
  type: list
  elements: str
releases:
  description: The cluster's releases in dependsOn order, with the result of this run.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The release (HelmRelease name).
      type: str
    namespace:
      description: Its namespace.
      type: str
    chart:
      description: The chart.
      type: str
    version:
      description: The pinned chart version (or range).
      type: str
    result:
      description: C(created), C(configured) or C(unchanged).
      type: str
    installed_version:
      description: The chart version Helm deployed last (C(status.history)), after the wait.
      type: str
    depends_on:
      description: Releases it waits for.
      type: list
      elements: str
version_changes:
  description: Releases whose pinned version this run changes (C(name), C(namespace), C(chart), C(from), C(to)).
  returned: always
  type: list
  elements: dict
flux:
  description: What shows that Flux runs (its served kinds and the controllers' Leases).
  returned: always
  type: dict
results:
  description: One entry per object applied, as M(c5c3.cobaltcore.apply) returns them.
  returned: always
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
waited_seconds:
  description: Seconds the call waited for objects that were not ready when it first looked (the operators' time).
  returned: when the call waited
  type: float
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.apply import ref_of
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import waiting_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import Waiter, WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import flux
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import flux_api


class FluxReleasesModule(KubeModule):
    argument_spec = dict(
        cluster=dict(type="str", required=True),
        groups=dict(type="list", elements="str", required=True),
        operators=dict(type="list", elements="dict", required=True),
        overrides=dict(type="dict", default={}),
        repositories=dict(type="dict", required=True),
        flux_namespace=dict(type="str", default=flux.FLUX_NAMESPACE),
        flux_timeout=dict(type="int", default=0),
        helm_wait=dict(type="bool", default=True),
        prune=dict(type="bool", default=True),
        wait=dict(type="bool", default=True),
        wait_timeout=dict(type="int", default=900),
        wait_sleep=dict(type="int", default=5),
    )

    def run(self):
        table = flux.validated_table(self.params["operators"], self.params["overrides"], self.params["repositories"])
        entries = flux.releases_for(table, self.params["groups"])
        self.results.update(releases=[], version_changes=[], results=[])
        self.results["flux"] = flux_api.await_flux(self.client, self.params["cluster"], self.params["flux_namespace"],
                                                   self.params["flux_timeout"], self.params["wait_sleep"],
                                                   progress=self.progress)
        objects = flux.manifests(entries, self.params["repositories"], self.params["helm_wait"],
                                 self.params["flux_namespace"])
        releases = [o for o in objects if o["kind"] == "HelmRelease"]
        live = flux_api.live_releases(self.client, releases)
        self.results["version_changes"] = flux.version_changes(releases, live)
        problems = flux.upgrade_problems(self.results["version_changes"], entries)
        unwanted = flux.unwanted_releases(flux_api.managed_releases(self.client), entries) \
            if self.params["prune"] else []
        left = flux_api.objects_left(self.client, unwanted)
        problems.extend("%s: HelmRelease %s/%s is no longer in the operator table, but objects of its kinds are left "
                        "(delete them first): %s" % (self.params["cluster"], namespace, name, ", ".join(objects))
                        for (namespace, name), objects in sorted(left.items()))
        if problems:
            raise InputError(problems)
        self.results["pruned"] = ["%s/%s" % (namespace, name) for namespace, name, unused in unwanted]
        # The operator table decides what it declares: a field another manager changed is taken back.
        results = self.record(self.applier(field_manager=flux.FIELD_MANAGER, force_conflicts=True).apply(objects))
        self.results["results"] = results
        by_ref = dict(((r["kind"], r.get("namespace"), r["name"]), r["result"]) for r in results)
        self.results["releases"] = [
            {"name": e["name"], "namespace": e["namespace"], "chart": e["chart"], "version": str(e["version"]),
             "depends_on": list(e.get("depends_on") or []),
             "result": by_ref.get(("HelmRelease", e["namespace"], e["name"]))} for e in entries]
        if self.params["wait"] and not self.check_mode and releases:
            try:
                self.wait_for(releases)
            finally:
                self.report_installed(releases)
        if unwanted:
            self.uninstall(unwanted)

    def uninstall(self, unwanted):
        """Delete the unwanted HelmReleases one after the other, dependents first; Flux uninstalls each (its
        finalizer) and the next goes once it is gone."""
        applier = self.applier(field_manager=flux.FIELD_MANAGER)
        waiter = Waiter(self.client, sleep=self.params["wait_sleep"], progress=self.progress)
        for namespace, name, unused in unwanted:
            release = {"apiVersion": flux.HELM_API_VERSION, "kind": "HelmRelease",
                       "metadata": {"namespace": namespace, "name": name}}
            self.results["results"].extend(self.record(applier.remove([release])))
            if not self.check_mode:
                waiter.wait([ref_of(release)], self.params["wait_timeout"], absent=True)

    def wait_for(self, releases):
        waiter = Waiter(self.client)
        refs = [ref_of(r) for r in releases]

        def attempt():
            states = waiter.check(refs)
            failure = flux_api.release_failure(self.client, self.params["flux_namespace"], releases, states)
            if failure:
                raise WaitError(self.message(failure, releases, states), Waiter._results(states, started))
            pending = [(ref, state) for ref, state, _obj in states if state is None or not state.ready]
            if pending:
                offer(self.progress, lambda: waiting_line(states))
            return not pending, states

        started = flux_api.now()
        done, states = poll(attempt, self.params["wait_timeout"], self.params["wait_sleep"])
        if not done:
            blocking = flux_api.first_blocking(releases, states)
            raise WaitError(self.message(blocking, releases, states, timeout=self.params["wait_timeout"]),
                            Waiter._results(states, started))

    def message(self, failure, releases, states, timeout=None):
        release, text = failure
        spec = release["spec"]["chart"]["spec"]
        behind = flux.waiting_behind(release, releases)
        head = ("not ready after %ss" % timeout) if timeout else "failed"
        msg = "%s: HelmRelease %s/%s (chart %s %s) %s: %s" % (
            self.params["cluster"], release["metadata"]["namespace"], release["metadata"]["name"],
            spec["chart"], spec["version"], head, text)
        if behind:
            msg += "; waiting behind it: %s" % ", ".join(behind)
        pending = [ref["name"] for ref, state, _obj in states if (state is None or not state.ready)
                   and ref["name"] != release["metadata"]["name"] and ref["name"] not in behind]
        if pending:
            msg += "; also not ready: %s" % ", ".join(pending)
        return msg

    def report_installed(self, releases):
        try:
            live = flux_api.live_releases(self.client, releases)
        except KubeError:
            return
        for entry in self.results["releases"]:
            entry["installed_version"] = flux.installed_version(live.get((entry["namespace"], entry["name"])))


def main():
    FluxReleasesModule()()


if __name__ == "__main__":
    main()
