# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the Gardener modules read from the garden's API (the client side of providers.gardener)."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers.gardener import (
    API_VERSION, admin_kubeconfig_from, admin_kubeconfig_request)


def project_namespace(client, project):
    """spec.namespace of a Gardener Project."""
    found = client.get(client.resource(API_VERSION, "Project"), project)
    namespace = ((found or {}).get("spec") or {}).get("namespace")
    if not namespace:
        raise KubeError("Gardener project %s %s" % (project, "has no spec.namespace yet" if found else "does not exist"))
    return namespace


# The options of the gardener_project doc fragment: a project, or its namespace, one of them.
PROJECT_OPTIONS = dict(project=dict(type="str"), namespace=dict(type="str"))
PROJECT_KWARGS = dict(required_one_of=[("project", "namespace")], mutually_exclusive=[("project", "namespace")])


def namespace_of(client, params):
    """The Shoots' namespace: the namespace option, else the project's."""
    return params["namespace"] or project_namespace(client, params["project"])


def fetch_admin_kubeconfig(client, namespace, name, expiration_seconds):
    """(kubeconfig text, expirationTimestamp) of a Shoot, from shoots/adminkubeconfig. An answer without a kubeconfig
    is the server's fault, not the task's input: a KubeError."""
    rtype = client.resource(API_VERSION, "Shoot")
    dummy, answer = client.request("POST", rtype.path(namespace, name, "adminkubeconfig"),
                                   body=admin_kubeconfig_request(expiration_seconds))
    try:
        return admin_kubeconfig_from(answer)
    except InputError as error:
        raise KubeError("Shoot %s/%s: the adminkubeconfig answer is unusable: %s"
                        % (namespace, name, "; ".join(error.problems)))
