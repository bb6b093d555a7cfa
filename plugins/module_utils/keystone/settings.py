# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 5, pure logic: one OpenStack cluster's Keystone catalog settings, validated, with defaults.

``normalize_settings(settings)`` reports every problem of the settings together
(InputError); keystone.catalog turns the result into K-ORC manifests.
"""


from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import string

try:
    from urllib.parse import urlparse
except ImportError:  # pragma: no cover - Python 2 is not supported
    from urlparse import urlparse

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.services import DEFAULT_SERVICES, SERVICES

INTERFACES = ("public", "internal")
# Seed 003: https://glance.openstack.svc.cluster.local:9292, .../keystone...:5000/v3.
URL_TEMPLATE = "https://{name}.{namespace}.svc.cluster.local:{port}{path}"
URL_FIELDS = ("name", "type", "port", "path", "namespace", "region", "cluster")

DEFAULT_DOMAIN = "Default"
DEFAULT_ADMIN_PROJECT = "admin"
DEFAULT_SERVICE_PROJECT = "service"
# keystone-manage bootstrap creates these roles (service since Keystone 2023.2).
DEFAULT_ROLES = ("admin", "member", "reader", "service")
DEFAULT_SERVICE_ROLES = ("admin", "service")
PASSWORD_LENGTH = 32
CREDENTIAL_SECRET_LENGTH = 48
MANAGEMENT_POLICIES = ("managed", "unmanaged")
INTERFACE_CHOICES = ("public", "internal", "admin")
# The name keystone-manage bootstrap gives the identity service (--bootstrap-service-name).
IDENTITY_SERVICE = "keystone"


class KeystoneCatalogError(ValueError):
    """Invalid settings: every problem, one line each."""

    def __init__(self, problems):
        super(KeystoneCatalogError, self).__init__("; ".join(problems))
        self.problems = list(problems)


# ---------------------------------------------------------------------------
# Settings.

def _url_problem(what, url):
    if not isinstance(url, str) or not url:
        return "%s is required (an http or https URL)" % what
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return "%s %r is not an http or https URL" % (what, url)
    return None


def _template_problem(what, template):
    if not isinstance(template, str) or not template:
        return "%s must be a non-empty string" % what
    try:
        fields = [field for _text, field, _spec, _conv in string.Formatter().parse(template) if field is not None]
    except ValueError as error:
        return "%s %r is not a valid template: %s" % (what, template, error)
    unknown = sorted(set(f for f in fields if f not in URL_FIELDS))
    if unknown:
        return "%s %r uses unknown placeholders %s (known: %s)" % (
            what, template, ", ".join(unknown), ", ".join(URL_FIELDS))
    return None


def _name_list(value, what, problems):
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        problems.append("%s must be a list of names" % what)
        return None
    bad = [v for v in value if not isinstance(v, str) or not v]
    if bad:
        problems.append("%s holds entries that are not names: %s" % (what, bad))
        return None
    return list(value)


def _service_entries(services, problems):
    """[(name, overrides)] from a list of names/dicts or a {name: bool|dict} mapping."""
    if services is None:
        return [(name, {}) for name in DEFAULT_SERVICES]
    entries = []
    if isinstance(services, dict):
        for name, value in services.items():
            if value is False or value is None:
                continue
            if value is True:
                value = {}
            if not isinstance(value, dict):
                problems.append("services.%s must be true, false or a mapping" % name)
                continue
            if value.get("enabled", True) is False:
                continue
            entries.append((name, value))
    elif isinstance(services, (list, tuple)):
        for index, item in enumerate(services):
            if isinstance(item, str):
                entries.append((item, {}))
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                if item.get("enabled", True) is not False:
                    entries.append((item["name"], item))
            else:
                problems.append("services[%d] must be a service name or a mapping with a name" % index)
    else:
        problems.append("services must be a list of service names or a mapping of them")
    return entries


def _service(name, overrides, settings, problems):
    base = SERVICES.get(name)
    if base is None and not all(overrides.get(k) for k in ("type", "port")):
        problems.append("service %s is not in the catalog table (%s); give its type and port"
                        % (name, ", ".join(sorted(SERVICES))))
        return None
    service = dict(base or {"path": "", "user": True, "description": "OpenStack service %s" % name})
    for key in ("type", "port", "path", "user", "description", "roles"):
        if overrides.get(key) is not None:
            service[key] = overrides[key]
    service["name"] = name
    if not kube_names.is_dns1123_label(name, max_length=kube_names.DNS1123_LABEL_MAX - len("-keystone-credentials")):
        problems.append("service name %r must be a DNS-1123 label of at most %d characters (it names Secrets)"
                        % (name, kube_names.DNS1123_LABEL_MAX - len("-keystone-credentials")))
    port = service.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        problems.append("service %s: port %r is not a TCP port" % (name, port))
    if not isinstance(service.get("type"), str) or not service["type"]:
        problems.append("service %s: type must be a non-empty string" % name)
    if not isinstance(service.get("path"), str):
        problems.append("service %s: path must be a string" % name)
    roles = service.get("roles", settings["service_roles"])
    roles = _name_list(roles, "service %s: roles" % name, problems)
    service["roles"] = roles if roles is not None else []
    undeclared = [r for r in service["roles"] if r not in settings["roles"]]
    if service["user"] and undeclared:
        problems.append("service %s: roles %s are not among the imported roles %s"
                        % (name, ", ".join(undeclared), ", ".join(settings["roles"])))
    for interface in INTERFACES:
        url = overrides.get("%s_url" % interface)
        if url is None and name == IDENTITY_SERVICE:
            url = settings["keystone_%s_url" % interface]
        if url is None:
            template = settings["%s_url_template" % interface]
            if _template_problem("%s_url_template" % interface, template) is None and isinstance(port, int):
                url = template.format(name=name, type=service.get("type"), port=port, path=service.get("path", ""),
                                      namespace=settings["namespace"], region=settings["region"],
                                      cluster=settings["cluster"])
            else:
                continue
        problem = _url_problem("service %s: %s URL" % (name, interface), url)
        if problem:
            problems.append(problem)
        service["%s_url" % interface] = url
    return service


def normalize_settings(settings):
    """Validated settings with defaults; raises KeystoneCatalogError with every problem."""
    if not isinstance(settings, dict):
        raise KeystoneCatalogError(["settings must be a mapping, got %s" % type(settings).__name__])
    problems = []
    s = {
        "namespace": settings.get("namespace"),
        "cluster": settings.get("cluster") or settings.get("namespace"),
        "region": settings.get("region"),
        "keystone_public_url": settings.get("keystone_public_url"),
        "keystone_internal_url": settings.get("keystone_internal_url") or settings.get("keystone_public_url"),
        "public_url_template": settings.get("public_url_template") or URL_TEMPLATE,
        "internal_url_template": settings.get("internal_url_template") or URL_TEMPLATE,
        "domain": settings.get("domain") or DEFAULT_DOMAIN,
        "admin_project": settings.get("admin_project") or DEFAULT_ADMIN_PROJECT,
        "service_project": settings.get("service_project") or DEFAULT_SERVICE_PROJECT,
        "service_project_policy": settings.get("service_project_policy") or "managed",
        "korc_secret": settings.get("korc_secret") or naming.KORC_CLOUDS_SECRET,
        "korc_cloud": settings.get("korc_cloud") or naming.KORC_CLOUD_NAME,
        "korc_auth_url": settings.get("korc_auth_url"),
        "korc_interface": settings.get("korc_interface") or "internal",
        "consumer_auth_url": settings.get("consumer_auth_url"),
        "consumer_interface": settings.get("consumer_interface") or "internal",
    }
    if not kube_names.is_dns1123_label(s["namespace"]):
        problems.append("namespace %r must be a DNS-1123 label (the OpenStack cluster's namespace)" % (s["namespace"],))
    if not kube_names.is_label_value(s["cluster"] or ""):
        problems.append("cluster %r is not a valid label value" % (s["cluster"],))
    if not isinstance(s["region"], str) or not s["region"]:
        problems.append("region is required (the Keystone region of the catalog's endpoints)")
    for key in ("keystone_public_url", "keystone_internal_url"):
        if key == "keystone_internal_url" and not settings.get(key):
            continue  # the public URL, checked already
        problem = _url_problem(key, s[key])
        if problem:
            problems.append(problem)
    for key in ("public_url_template", "internal_url_template"):
        problem = _template_problem(key, s[key])
        if problem:
            problems.append(problem)
    for key in ("domain", "admin_project", "service_project", "korc_cloud"):
        if not isinstance(s[key], str) or not s[key].strip():
            problems.append("%s must be a non-empty string" % key)
    if s["service_project_policy"] not in MANAGEMENT_POLICIES:
        problems.append("service_project_policy must be one of %s, got %r"
                        % (", ".join(MANAGEMENT_POLICIES), s["service_project_policy"]))
    for key in ("korc_interface", "consumer_interface"):
        if s[key] not in INTERFACE_CHOICES:
            problems.append("%s must be one of %s, got %r" % (key, ", ".join(INTERFACE_CHOICES), s[key]))
    if not kube_names.is_dns1123_subdomain(s["korc_secret"]):
        problems.append("korc_secret %r is not a valid Secret name" % (s["korc_secret"],))
    for key in ("korc_auth_url", "consumer_auth_url"):
        if s[key] is None:
            s[key] = s["keystone_internal_url"]
        else:
            problem = _url_problem(key, s[key])
            if problem:
                problems.append(problem)
    roles = _name_list(settings.get("roles", list(DEFAULT_ROLES)), "roles", problems)
    s["roles"] = _unique(roles or [], "roles", problems)
    service_roles = _name_list(settings.get("service_roles", list(DEFAULT_SERVICE_ROLES)), "service_roles", problems)
    s["service_roles"] = service_roles or []
    services = []
    seen = set()
    for name, overrides in _service_entries(settings.get("services"), problems):
        if name in seen:
            problems.append("service %s is listed twice" % name)
            continue
        seen.add(name)
        service = _service(name, overrides, s, problems)
        if service is not None:
            services.append(service)
    if s["roles"]:
        names = [naming.korc_object_name(r) for r in s["roles"]]
        clash = sorted(set(n for n in names if names.count(n) > 1))
        if clash:
            problems.append("roles map to the same K-ORC object name: %s" % ", ".join(clash))
    s["services"] = services
    if problems:
        raise KeystoneCatalogError(problems)
    return s


def _unique(values, what, problems):
    duplicates = sorted(set(v for v in values if values.count(v) > 1))
    if duplicates:
        problems.append("%s lists %s more than once" % (what, ", ".join(duplicates)))
    return list(dict.fromkeys(values))
