#!/usr/bin/python
# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

DOCUMENTATION = r"""
module: openstack_cluster_claim_status
short_description: Write the status of OpenStackCluster claims on the management cluster
version_added: 0.6.0
description:
  - Sets conditions on C(OpenStackCluster) claims (C(c5c3.io/v1alpha1)) through their status subresource, as
    Crossplane does on a claim - for phase 7 with C(tenants_claims_source=management_cluster), which computes them
    with filter C(c5c3.cobaltcore.claim_statuses) (C(Synced) and C(Ready)).
  - A condition whose status is unchanged keeps its C(lastTransitionTime); a changed status or a new condition gets
    the current time. Each condition carries C(observedGeneration), the claim generation it was decided for.
    Conditions of other types are kept.
  - One LIST of the claims (all namespaces, or O(namespace)), then one merge patch of the status subresource per
    claim whose conditions change; a claim whose status is already so is not written, so a re-run is a no-op.
    A claim that is gone (or a cluster that does not serve the kind) is reported C(absent); no statuses, no request.
author:
  - CobaltCore team (@c5c3)
extends_documentation_fragment:
  - c5c3.cobaltcore.kube_connection
attributes:
  check_mode:
    description: Reports what would change; nothing is written.
    support: full
  diff_mode:
    description: Shows each changed claim's conditions before and after.
    support: full
options:
  statuses:
    description: The claims' statuses.
    type: list
    elements: dict
    required: true
    suboptions:
      namespace:
        description: The claim's namespace.
        type: str
        required: true
      name:
        description: The claim's name.
        type: str
        required: true
      observed_generation:
        description: The claim generation the conditions were decided for; omitted, the one a condition has is kept.
        type: int
      conditions:
        description: Conditions to set, each with C(type), C(status), C(reason) and optionally C(message).
        type: list
        elements: dict
        default: []
      initial_conditions:
        description: Conditions set only where the claim has none of that type yet.
        type: list
        elements: dict
        default: []
  namespace:
    description: Read the claims of this namespace only (every status must be of it); omitted, every namespace.
    type: str
"""

EXAMPLES = r"""
- name: Write each claim's status
  c5c3.cobaltcore.openstack_cluster_claim_status:
    kubeconfig: "{{ hostvars[groups['management'][0]].cobaltcore_kubeconfig }}"
    statuses:
      - namespace: tenant-a
        name: customer-a-prod
        observed_generation: 2
        conditions:
          - {type: Synced, status: "True", reason: ReconcileSuccess}
          - {type: Ready, status: "False", reason: Creating, message: "phase 1 infrastructure is not ready: ..."}
"""

RETURN = r"""
results:
  description: One entry per status - C(namespace), C(name), C(result) (C(updated), C(unchanged), C(absent)).
  returned: always
  type: list
  elements: dict
requests:
  description: API requests this call made, by HTTP verb.
  returned: always
  type: dict
"""


from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.module import KubeModule
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import claim_status, naming

CONDITION_STATUSES = ("True", "False", "Unknown")


def _condition_problems(conditions, where):
    problems = []
    for index, cond in enumerate(conditions):
        path = "%s[%d]" % (where, index)
        if not isinstance(cond, dict):
            problems.append(problem(path, "must be a mapping"))
            continue
        for key in ("type", "reason"):
            if not isinstance(cond.get(key), str) or not cond.get(key):
                problems.append(problem("%s.%s" % (path, key), "is required (a string)"))
        if cond.get("status") not in CONDITION_STATUSES:
            problems.append(problem("%s.status" % path, "must be one of %s, got %r" % (
                ", ".join(CONDITION_STATUSES), cond.get("status"))))
        if "message" in cond and not isinstance(cond["message"], str):
            problems.append(problem("%s.message" % path, "must be a string"))
    return problems


class OpenStackClusterClaimStatusModule(KubeModule):
    argument_spec = dict(
        statuses=dict(type="list", elements="dict", required=True, options=dict(
            namespace=dict(type="str", required=True),
            name=dict(type="str", required=True),
            observed_generation=dict(type="int"),
            conditions=dict(type="list", elements="dict", default=[]),
            initial_conditions=dict(type="list", elements="dict", default=[]),
        )),
        namespace=dict(type="str"),
    )

    def validate(self):
        problems = []
        for index, entry in enumerate(self.params["statuses"]):
            for key in ("conditions", "initial_conditions"):
                problems.extend(_condition_problems(entry[key], "statuses[%d].%s" % (index, key)))
            if self.params["namespace"] and entry["namespace"] != self.params["namespace"]:
                problems.append(problem("statuses[%d].namespace" % index, "is %s, but only namespace %s is read"
                                        % (entry["namespace"], self.params["namespace"])))
        if problems:
            raise InputError(problems)

    def run(self):
        self.validate()
        self.results["results"] = results = []
        if not self.params["statuses"]:
            return  # no request: the kind may not be served yet (check mode before the CRD exists)
        try:
            rtype = self.client.resource(naming.CLAIM_API_VERSION, naming.CLAIM_KIND)
        except KubeError as exc:
            if exc.status != 404:
                raise
            rtype = None
        live = dict(((item["metadata"]["namespace"], item["metadata"]["name"]), item)
                    for item in (self.client.list(rtype, self.params["namespace"]) if rtype else []))
        now = timestamps.format_datetime()
        for entry in self.params["statuses"]:
            key = (entry["namespace"], entry["name"])
            result = {"namespace": entry["namespace"], "name": entry["name"]}
            results.append(result)
            item = live.get(key)
            if item is None:
                result["result"] = "absent"
                continue
            status = item.get("status") or {}
            conditions = claim_status.merge_conditions(status.get("conditions"), entry["conditions"],
                                                       entry["initial_conditions"], entry["observed_generation"], now)
            patch = claim_status.status_patch(status, conditions)
            if patch is None:
                result["result"] = "unchanged"
                continue
            if not self.check_mode:
                code, _body = self.client.request("PATCH", rtype.path(key[0], key[1], "status"), body=patch,
                                                  content_type="application/merge-patch+json", allow=(404,))
                if code == 404:  # deleted since the LIST
                    result["result"] = "absent"
                    continue
            result["result"] = "updated"
            self.results["changed"] = True
            if self.diff:
                self.results.setdefault("diff", []).append({
                    "before": {"conditions": status.get("conditions") or []}, "after": {"conditions": conditions},
                    "before_header": "OpenStackCluster %s/%s status" % key,
                    "after_header": "OpenStackCluster %s/%s status" % key})


def main():
    OpenStackClusterClaimStatusModule()()


if __name__ == "__main__":
    main()
