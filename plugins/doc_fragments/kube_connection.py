# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type


class ModuleDocFragment(object):
    # The Kubernetes connection of the collection's Kubernetes modules (k8s/connection.py,
    # KUBE_CONNECTION_SPEC): kubernetes.core's names, so one module_defaults group serves both.
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - The kubeconfig, as a path to a file (several joined by C(:)), as a dict, or as its YAML text (for
        example C(lookup('file', ...)) without C(from_yaml)). Without it and O(host), C(K8S_AUTH_KUBECONFIG),
        then C(~/.kube/config).
      - A string is a path only when it names an existing file; any other string is read as a kubeconfig's
        text, and no message ever quotes it.
      - Of a dict or a text, only the credentials (tokens, passwords, client keys, C(exec) and C(auth-provider)
        sections) are masked in the module's output, and a text as a whole; names, servers and certificates
        of a dict stay readable, and so does a path.
    type: raw
  context:
    description: The kubeconfig context to use (C(K8S_AUTH_CONTEXT)); its current context when omitted.
    type: str
  host:
    description: The API server's URL (C(K8S_AUTH_HOST)); replaces the kubeconfig's.
    type: str
  api_key:
    description: A bearer token (C(K8S_AUTH_API_KEY)).
    type: str
  username:
    description: User for basic authentication (C(K8S_AUTH_USERNAME)).
    type: str
  password:
    description: Password for basic authentication (C(K8S_AUTH_PASSWORD)).
    type: str
  validate_certs:
    description: Whether the API server's certificate is verified (C(K8S_AUTH_VERIFY_SSL)).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description: The CA bundle that verifies the API server (C(K8S_AUTH_SSL_CA_CERT)).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description: A client certificate file (C(K8S_AUTH_CERT_FILE)).
    type: path
    aliases: [cert_file]
  client_key:
    description: The client certificate's key file (C(K8S_AUTH_KEY_FILE)).
    type: path
    aliases: [key_file]
  proxy:
    description: An HTTP proxy for the API server (C(K8S_AUTH_PROXY)).
    type: str
  no_proxy:
    description: Hosts reached without the proxy, comma-separated (C(K8S_AUTH_NO_PROXY)).
    type: str
  proxy_headers:
    description: Headers sent to the proxy.
    type: dict
    suboptions:
      proxy_basic_auth:
        description: C(user:password) for the proxy.
        type: str
      basic_auth:
        description: C(user:password) for basic authentication.
        type: str
      user_agent:
        description: The User-Agent.
        type: str
  persist_config:
    description: Accepted for kubernetes.core's module_defaults; this collection never writes the kubeconfig.
    type: bool
  impersonate_user:
    description: The user to act as (C(K8S_AUTH_IMPERSONATE_USER)).
    type: str
  impersonate_groups:
    description: The groups to act as (C(K8S_AUTH_IMPERSONATE_GROUPS), comma-separated).
    type: list
    elements: str
"""

    # The Kubernetes connection of the Keystone modules: openstack.cloud's options validate_certs,
    # ca_cert, client_cert and client_key are Keystone's there and never reach the Kubernetes client.
    KEYSTONE_MODULES = r"""
options:
  kubeconfig:
    description:
      - Kubeconfig of the control-plane cluster, a path or a dict (or C(K8S_AUTH_KUBECONFIG)). Needed for
        O(secret_auth) and by the modules that read or write Secrets.
      - Only this option, O(context) and the C(K8S_AUTH_*) variables configure the Kubernetes connection;
        O(validate_certs), O(ca_cert), O(client_cert) and O(client_key) are Keystone's.
      - Of a dict, only the credentials are masked in the module's output.
    type: raw
  context:
    description: The kubeconfig context.
    type: str
"""
