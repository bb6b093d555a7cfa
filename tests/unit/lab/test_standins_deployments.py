# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether an operator runs: its Deployment Available (regionlab/standins/deployments.py)."""

from regionlab.standins import deployments
from regionlab.standins.client import ApiError


def deployment(name="keystone-operator", replicas=1, available=1, condition="True", generation=2, observed=2,
               labels=None, deleting=False):
    meta = {"name": name, "namespace": "openstack", "generation": generation,
            "labels": labels if labels is not None else {"app.kubernetes.io/name": name}}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T00:00:00Z"
    return {"metadata": meta, "spec": {"replicas": replicas},
            "status": {"observedGeneration": observed, "availableReplicas": available,
                       "conditions": [{"type": "Available", "status": condition}]}}


def test_an_available_replica_of_the_current_generation_runs_the_operator():
    assert deployments.available(deployment())
    assert deployments.running([deployment()], "keystone-operator")


def test_scaled_to_zero_rolled_out_unready_unobserved_or_deleted_does_not():
    # A Deployment scaled to zero reports Available True (no replica is missing): not running all the same.
    assert not deployments.available(deployment(replicas=0, available=0))
    assert not deployments.available(deployment(available=0, condition="False"))
    assert not deployments.available(deployment(observed=1))
    assert not deployments.available(deployment(deleting=True))
    assert not deployments.running([], "keystone-operator")


def test_the_operator_is_found_by_its_chart_label():
    assert not deployments.running([deployment()], "glance-operator")
    rook = deployment(name="rook-ceph-operator", labels={"operator": "rook"})
    assert deployments.running([rook], "rook-ceph-operator")
    assert not deployments.running([deployment(name="rook-ceph-operator", labels={})], "rook-ceph-operator")


class FakeKube:
    def __init__(self, items):
        self.items = items

    def list(self, url):
        if isinstance(self.items, Exception):
            raise self.items
        assert url == deployments.DEPLOYMENTS
        return self.items


def test_a_change_is_logged_once_and_an_unanswered_list_keeps_the_last_answer():
    logs = []
    kube = FakeKube([deployment()])
    operators = deployments.Operators(kube, logs.append)
    operators.refresh()
    assert operators.runs("keystone-operator") and operators.runs("keystone-operator")
    kube.items = ApiError(503, "unavailable")
    operators.refresh()
    assert operators.runs("keystone-operator")
    kube.items = [deployment(replicas=0, available=0)]
    operators.refresh()
    assert not operators.runs("keystone-operator")
    assert len(logs) == 2 and "is Available" in logs[0] and "no available replica" in logs[1]
