# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ovn_verify and ovn_database modules read: the OVNCluster, its OVNChassis and Neutron on the control-plane
cluster, and each hypervisor pool's selected Nodes from that pool's own cluster (one LIST each)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.poll import poll
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.progress import offer
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.progress import problems_line
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.wait import WaitError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import ovn

OVN_API_VERSION = "ovn.c5c3.io/v1alpha1"
NEUTRON_API_VERSION = "neutron.openstack.c5c3.io/v1alpha1"


def _get(client, api_version, kind, name, namespace):
    try:
        rtype = client.resource(api_version, kind)
    except KubeError as exc:
        if exc.status == 404:
            return None
        raise
    return client.get(rtype, name, namespace)


def _list(client, api_version, kind, namespace=None, label_selector=None):
    try:
        rtype = client.resource(api_version, kind)
    except KubeError as exc:
        if exc.status == 404:
            return []
        raise
    return client.list(rtype, namespace, label_selector=label_selector)


def ovn_cluster(client, name, namespace):
    """The OVNCluster, None when there is none (or the ovn-operator's CRD is not served)."""
    return _get(client, OVN_API_VERSION, "OVNCluster", name, namespace)


def read(client, pool_clients, params):
    cluster = ovn_cluster(client, params["name"], params["namespace"])
    chassis = _list(client, OVN_API_VERSION, "OVNChassis", params["namespace"])
    selector = ",".join("%s=%s" % (k, v) if v else k for k, v in sorted(ovn.node_selector(cluster).items()))
    nodes = dict((pool, _list(pool_client, "v1", "Node", label_selector=selector))
                 for pool, pool_client in pool_clients.items())
    neutron = _get(client, NEUTRON_API_VERSION, "Neutron", params["neutron_name"], params["neutron_namespace"])
    return cluster, chassis, nodes, neutron


def report(client, pool_clients, plan, params):
    cluster, chassis, nodes, neutron = read(client, pool_clients, params)
    return ovn.verify(plan, cluster, chassis, nodes, neutron,
                      where="OVNCluster %s/%s" % (params["namespace"], params["name"]),
                      neutron_where="Neutron %s/%s" % (params["neutron_namespace"], params["neutron_name"]))


def await_report(client, pool_clients, plan, params, progress=None):
    def attempt():
        found = report(client, pool_clients, plan, params)
        if not found["ready"]:
            offer(progress, lambda: problems_line("OVNCluster %s/%s" % (params["namespace"], params["name"]),
                                                  found["problems"]))
        return found["ready"], found

    done, found = poll(attempt, params["timeout"], params["sleep"])
    if not done:
        raise WaitError(ovn.failure_message(found, params["timeout"]), [found])
    return found
