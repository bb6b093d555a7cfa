# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hypervisor operator's API (kvm.cloud.sap/v1 Hypervisor, Eviction) on a hypervisor pool's cluster: reading and waiting.

The verdict itself is region/hypervisors.py; readiness is the engine's table (k8s/readiness.py).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.readiness import evaluate
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import hypervisors as hv


def pool_nodes(client, worker_pool):
    """The Nodes of the Gardener worker pool (one LIST with a label selector)."""
    rtype = client.resource("v1", "Node")
    return hv.pool_nodes(client.list(rtype, label_selector="%s=%s" % (hv.WORKER_POOL_LABEL, worker_pool)),
                         worker_pool)


def _served(client, kind):
    """The operator's kind, None while its CRD is not served."""
    try:
        return client.resource(hv.HYPERVISOR_API_VERSION, kind)
    except KubeError as exc:
        if exc.status != 404:
            raise
        return None


def hypervisors(client):
    """Every Hypervisor of the cluster; None while the operator's CRD is not served."""
    rtype = _served(client, hv.HYPERVISOR_KIND)
    return None if rtype is None else client.list(rtype)


def eviction(client, name):
    """The Eviction of the Hypervisor `name`; None when it has none or the operator's CRD is not served."""
    rtype = _served(client, hv.EVICTION_KIND)
    return None if rtype is None else client.get(rtype, name)


def readiness(obj):
    """The engine's verdict on a Hypervisor, as a dict."""
    return evaluate(obj).as_dict()
