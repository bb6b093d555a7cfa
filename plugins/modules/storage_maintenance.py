#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: storage_maintenance
short_description: Take one storage Node's Ceph OSDs out with their data moved, and back in
version_added: 0.6.0
description:
  - The Ceph commands run in a Job in the CephCluster's namespace, with the CephCluster's image
    (C(spec.cephVersion.image)), configured from what Rook keeps there - the ConfigMap C(rook-ceph-mon-endpoints)
    and the Secret C(rook-ceph-mon), as Rook's own osd-purge Job reads them. The controller never reaches Ceph. The
    Job is deleted once the module read its outcome.
  - The Node's OSDs are those under its CRUSH host bucket (its C(kubernetes.io/hostname) label, dots made dashes,
    as Rook names it).
  - O(state=on) - refused, before anything changes, when taking the OSDs out would leave a pool fewer failure-domain
    buckets with OSDs up and in than its size (its PGs would stay undersized), naming each such pool. Otherwise
    C(ceph osd out), then waits until C(ceph osd safe-to-destroy) says their data lives elsewhere and every PG is
    C(active+clean). Only then the Node is cordoned (Rook prepares no new OSDs on it) and annotated
    C(c5c3.io/storage-maintenance) with O(reason), under the field manager C(c5c3.cobaltcore-maintenance).
  - O(state=off) - C(ceph osd in), waits until every PG is C(active+clean), then drops the cordon and the annotation
    it set. A Node held for another reason is refused, naming it.
  - O(state=purged) - for a Node that is gone (its server released) - its OSDs, out, are purged
    (C(ceph osd purge)) once they are down, and its CRUSH bucket removed, as Rook's RemoveOSDs does; then waits
    until every PG is C(active+clean) again (without their CRUSH weight, CRUSH may place PGs anew). Refused while
    any of them is in, or while the Node exists (check mode plans it for a Node still there).
  - A Node already as asked reports C(changed=false) without a Job. A cluster without that Node reports
    RV(found=false) and changes nothing (maintenance.yml runs on every storage pool; one of them has it).
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
  - c5c3.cobaltcore.operator_wait
  - c5c3.cobaltcore.progress
attributes:
  check_mode:
    description: Reads the Node and the CephCluster and reports the plan; no Job runs, nothing is written. The
      refusal for too few failure domains needs Ceph's own view, which only the Job reads.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options:
  node:
    description: The storage Node.
    type: str
    required: true
  state:
    description: Its OSDs out with their data moved (C(on)), back in (C(off)), or purged after the Node went
      (C(purged)).
    type: str
    choices: ["on", "off", "purged"]
    required: true
  reason:
    description: The maintenance reason the module sets and recognises as its own.
    type: str
    default: cobaltcore - maintenance
  crush_host:
    description:
      - With O(state=purged), the gone Node's CRUSH host bucket, as RV(crush_host) returned it while the Node was
        there. Default - the Node's name, dots made dashes.
    type: str
  namespace:
    description: The CephCluster's namespace, where the Job runs.
    type: str
    default: rook-ceph
  pod_annotations:
    description: Annotations of the Job's pod.
    type: dict
"""

EXAMPLES = r"""
- name: Take st-pool-a-node-2's OSDs out, their data moved
  c5c3.cobaltcore.storage_maintenance:
    kubeconfig: "{{ cobaltcore_kubeconfig }}"
    node: st-pool-a-node-2
    state: "on"
"""

RETURN = r"""
found:
  description: Whether this cluster has the Node (with O(state=purged), whether it has the CephCluster).
  returned: always
  type: bool
maintenance:
  description: Who held the Node in maintenance before - C(null), C(ours), or the other holder's reason.
  returned: when found
  type: str
job:
  description: The Job that ran, C({namespace, name, action}), or would run in check mode.
  returned: when a Job ran or would run
  type: dict
crush_host:
  description: The Node's CRUSH host bucket, where its OSDs are.
  returned: when found
  type: str
health:
  description: The CephCluster's C(status.ceph.health) as the module last read it.
  returned: when found
  type: str
"""

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.kube_names import JOB_NAME_LABEL
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import readiness
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import OPERATOR_WAIT_SPEC, KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ceph_cluster, naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import storage_maintenance as maintenance


class StorageMaintenanceModule(KubeModule):
    argument_spec = dict(
        node=dict(type="str", required=True),
        state=dict(type="str", required=True, choices=["on", "off", "purged"]),
        reason=dict(type="str", default=maintenance.REASON),
        crush_host=dict(type="str"),
        namespace=dict(type="str", default=naming.ROOK_NAMESPACE),
        pod_annotations=dict(type="dict"),
        **OPERATOR_WAIT_SPEC
    )

    def run(self):
        name, state, reason = self.params["node"], self.params["state"], self.params["reason"]
        cluster = self.ceph_cluster()
        node = self.client.get(self.client.resource("v1", "Node"), name)
        if state == "purged":
            self.results.update(found=cluster is not None)
            if cluster is None:
                return
            if node is not None and not self.check_mode:  # a check run of scale_in.yml released nothing yet
                raise InputError([problem("node", "Node %s still exists: only a gone Node's OSDs are purged" % name)])
            host = self.params["crush_host"] or maintenance.crush_host({"metadata": {"name": name}})
            self.results.update(health=self.health(cluster), crush_host=host)
            self.run_job(maintenance.PURGE, host, cluster)
            return
        self.results.update(found=node is not None and cluster is not None)
        if not self.results["found"]:
            return
        held, host = maintenance.owner(node, reason), maintenance.crush_host(node)
        self.results.update(maintenance=held, health=self.health(cluster), crush_host=host)
        if held not in (None, "ours"):
            raise InputError([problem("node", "Node %s is in storage maintenance for another reason (%s): it is "
                                      "left alone" % (name, held))])
        on = state == "on"
        if (on and maintenance.is_done(node, reason)) or (not on and held is None):
            return
        self.run_job(maintenance.OUT if on else maintenance.IN, host, cluster)
        self.client.server_side_apply(self.client.resource("v1", "Node"),
                                      maintenance.node_manifest(name, on, reason), maintenance.FIELD_MANAGER,
                                      force=True, dry_run=self.check_mode)

    def ceph_cluster(self):
        try:
            rtype = self.client.resource(naming.ROOK_API_VERSION, "CephCluster")
        except KubeError as exc:
            if exc.status != 404:
                raise
            return None  # no Rook here: no storage Node either
        return self.client.get(rtype, ceph_cluster.CLUSTER_NAME, self.params["namespace"])

    @staticmethod
    def health(cluster):
        return ((cluster.get("status") or {}).get("ceph") or {}).get("health")

    def run_job(self, action, host, cluster):
        """Runs the action's Job to its end (a failed one fails the module with the Job's reason) and deletes it."""
        namespace = self.params["namespace"]
        image = maintenance.cluster_image(cluster)
        job = maintenance.job_manifest(action, host, image, self.params["wait_timeout"], namespace,
                                       self.params["pod_annotations"])
        name = job["metadata"]["name"]
        self.results["job"] = {"namespace": namespace, "name": name, "action": action}
        self.results["changed"] = True
        if self.check_mode:
            return
        jobs = self.client.resource("batch/v1", "Job")
        if self.client.get(jobs, name, namespace) is None:  # one left by an interrupted run is waited for
            self.client.server_side_apply(jobs, job)

        def attempt():
            found = self.client.get(jobs, name, namespace)
            offer(self.progress, lambda: "Node %s: waiting until the Job %s/%s ends (OSDs %s)" % (
                self.params["node"], namespace, name, action))
            if found is None:
                return True, "gone"
            verdict = readiness.evaluate(found)  # the Job rule: Complete, or Failed / FailureTarget
            if verdict.ready:
                return True, "complete"
            return verdict.terminal, "failed"

        ended, outcome = poll(attempt, self.params["wait_timeout"] + 60, self.params["wait_sleep"])
        why = None
        if not ended:
            why = "did not end within %ss" % (self.params["wait_timeout"] + 60)
        elif outcome == "failed":
            pods = self.client.list(self.client.resource("v1", "Pod"), namespace,
                                    label_selector="%s=%s" % (JOB_NAME_LABEL, name))
            why = "(OSDs %s) failed: %s" % (action, maintenance.pod_message(pods) or "no termination message")
        elif outcome == "gone":
            why = "(OSDs %s) was deleted before it ended" % action
        self.client.delete(jobs, name, namespace, propagation="Background")
        if why:
            raise WaitError("Node %s: the Job %s/%s %s" % (self.params["node"], namespace, name, why), [])


def main():
    StorageMaintenanceModule()()


if __name__ == "__main__":
    main()
