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

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.services import (
    DEFAULT_SERVICES, SERVICES, URL_FIELDS, URL_TEMPLATE, service_url)

INTERFACES = ("public", "internal")

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


# ---------------------------------------------------------------------------
# Settings.

def _url_problem(field, url):
    if not isinstance(url, str) or not url:
        return problem(field, "is required (an http or https URL)")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return problem(field, "%r is not an http or https URL" % (url,))
    return None


def _template_problem(field, template):
    if not isinstance(template, str) or not template:
        return problem(field, "must be a non-empty string")
    try:
        fields = [name for _text, name, _spec, _conv in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        return problem(field, "%r is not a valid template: %s" % (template, error))
    unknown = sorted(set(f for f in fields if f not in URL_FIELDS))
    if unknown:
        return problem(field, "%r uses unknown placeholders %s (known: %s)" % (
            template, ", ".join(unknown), ", ".join(URL_FIELDS)))
    return None


def _name_list(value, field, problems):
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        problems.append(problem(field, "must be a list of names"))
        return None
    bad = [v for v in value if not isinstance(v, str) or not v]
    if bad:
        problems.append(problem(field, "holds entries that are not names: %s" % (bad,)))
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
                problems.append(problem("services.%s" % name, "must be true, false or a mapping"))
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
                problems.append(problem("services[%d]" % index, "must be a service name or a mapping with a name"))
    else:
        problems.append(problem("services", "must be a list of service names or a mapping of them"))
    return entries


def _service(name, overrides, settings, problems):
    where = "services.%s" % name
    base = SERVICES.get(name)
    if base is None and not all(overrides.get(k) for k in ("type", "port")):
        problems.append(problem(where, "is not in the catalog table (%s); give its type and port"
                                % ", ".join(sorted(SERVICES))))
        return None
    service = dict(base or {"path": "", "user": True, "description": "OpenStack service %s" % name})
    for key in ("type", "port", "path", "user", "description", "roles"):
        if overrides.get(key) is not None:
            service[key] = overrides[key]
    service["name"] = name
    if not kube_names.is_dns1123_label(name, max_length=kube_names.DNS1123_LABEL_MAX - len("-keystone-credentials")):
        problems.append(problem(where, "the name %r must be a DNS-1123 label of at most %d characters (it names Secrets)"
                                % (name, kube_names.DNS1123_LABEL_MAX - len("-keystone-credentials"))))
    port = service.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        problems.append(problem(where + ".port", "%r is not a TCP port" % (port,)))
    if not isinstance(service.get("type"), str) or not service["type"]:
        problems.append(problem(where + ".type", "must be a non-empty string"))
    if not isinstance(service.get("path"), str):
        problems.append(problem(where + ".path", "must be a string"))
    roles = service.get("roles", settings["service_roles"])
    roles = _name_list(roles, where + ".roles", problems)
    service["roles"] = roles if roles is not None else []
    undeclared = [r for r in service["roles"] if r not in settings["roles"]]
    if service["user"] and undeclared:
        problems.append(problem(where + ".roles", "%s are not among the imported roles %s"
                                % (", ".join(undeclared), ", ".join(settings["roles"]))))
    for interface in INTERFACES:
        url = overrides.get("%s_url" % interface)
        if url is None and name == IDENTITY_SERVICE:
            url = settings["keystone_%s_url" % interface]
        if url is None:
            template = settings["%s_url_template" % interface]
            if _template_problem("%s_url_template" % interface, template) is None and isinstance(port, int):
                url = service_url(template, service, settings["namespace"], settings["region"], settings["cluster"])
            else:
                continue
        bad_url = _url_problem("%s.%s_url" % (where, interface), url)
        if bad_url:
            problems.append(bad_url)
        service["%s_url" % interface] = url
    return service


def normalize_settings(settings):
    """Validated settings with defaults; raises InputError with every problem."""
    if not isinstance(settings, dict):
        raise InputError([problem("settings", "must be a mapping, got %s" % type(settings).__name__)])
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
        "service_password_version": settings.get("service_password_version") or 0,
        "service_credential_version": settings.get("service_credential_version") or 0,
    }
    if not kube_names.is_dns1123_label(s["namespace"]):
        problems.append(problem("namespace", "%r must be a DNS-1123 label (the OpenStack cluster's namespace)"
                                % (s["namespace"],)))
    if not kube_names.is_label_value(s["cluster"] or ""):
        problems.append(problem("cluster", "%r is not a valid label value" % (s["cluster"],)))
    if not isinstance(s["region"], str) or not s["region"]:
        problems.append(problem("region", "is required (the Keystone region of the catalog's endpoints)"))
    # Keystone's own URLs are optional (then the templates'); an internal one not given is the public one.
    checks = [_url_problem(key, s[key]) for key in ("keystone_public_url", "keystone_internal_url")
              if settings.get(key)]
    checks.extend(_template_problem(key, s[key]) for key in ("public_url_template", "internal_url_template"))
    problems.extend(check for check in checks if check)
    for key in ("domain", "admin_project", "service_project", "korc_cloud"):
        if not isinstance(s[key], str) or not s[key].strip():
            problems.append(problem(key, "must be a non-empty string"))
    for key in ("service_password_version", "service_credential_version"):
        version = s[key]
        if isinstance(version, str) and version.isdigit():
            s[key] = version = int(version)
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            problems.append(problem(key, "must be a whole number of at least 0, got %r" % (version,)))
    if s["service_project_policy"] not in MANAGEMENT_POLICIES:
        problems.append(problem("service_project_policy", "must be one of %s, got %r"
                                % (", ".join(MANAGEMENT_POLICIES), s["service_project_policy"])))
    for key in ("korc_interface", "consumer_interface"):
        if s[key] not in INTERFACE_CHOICES:
            problems.append(problem(key, "must be one of %s, got %r" % (", ".join(INTERFACE_CHOICES), s[key])))
    if not kube_names.is_dns1123_subdomain(s["korc_secret"]):
        problems.append(problem("korc_secret", "%r is not a valid Secret name" % (s["korc_secret"],)))
    for key in ("korc_auth_url", "consumer_auth_url"):
        if s[key] is None:
            s[key] = s["keystone_internal_url"]
        else:
            bad_url = _url_problem(key, s[key])
            if bad_url:
                problems.append(bad_url)
    roles = _name_list(settings.get("roles", list(DEFAULT_ROLES)), "roles", problems)
    s["roles"] = _unique(roles or [], "roles", problems)
    service_roles = _name_list(settings.get("service_roles", list(DEFAULT_SERVICE_ROLES)), "service_roles", problems)
    s["service_roles"] = service_roles or []
    services = []
    seen = set()
    for name, overrides in _service_entries(settings.get("services"), problems):
        if name in seen:
            problems.append(problem("services.%s" % name, "is listed twice"))
            continue
        seen.add(name)
        service = _service(name, overrides, s, problems)
        if service is not None:
            services.append(service)
    if s["roles"]:
        names = [naming.korc_object_name(r) for r in s["roles"]]
        clash = sorted(set(n for n in names if names.count(n) > 1))
        if clash:
            problems.append(problem("roles", "map to the same K-ORC object name: %s" % ", ".join(clash)))
    s["services"] = services
    if problems:
        raise InputError(problems)
    return s


def _unique(values, field, problems):
    duplicates = sorted(set(v for v in values if values.count(v) > 1))
    if duplicates:
        problems.append(problem(field, "lists %s more than once" % ", ".join(duplicates)))
    return list(dict.fromkeys(values))
