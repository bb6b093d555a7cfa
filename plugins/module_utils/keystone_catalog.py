# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase 5, pure logic: the service catalog of one OpenStack cluster as K-ORC manifests.

``catalog_plan(settings)`` validates one OpenStack cluster's settings (every
problem reported together) and returns everything the keystone_bootstrap role
applies and checks, in dependency order:

* ``imports``: what ``keystone-manage bootstrap`` created, imported with
  ``managementPolicy: unmanaged`` (Domain, the admin Project, Roles, the
  identity Service), plus the service Project (managed with ``onDelete: detach``
  unless told to import it: ``keystone-manage bootstrap`` does not create it);
* ``catalog``: a managed Service per enabled service and its public and internal
  Endpoints (the identity Service's Endpoints adopt the bootstrap's ones);
* ``users``: a managed service User per service that runs as one;
* ``application_credentials``: a managed ApplicationCredential per service user,
  its secret in ``<service>-keystone-credentials`` (K-ORC v2.6.0 reads key
  ``value`` from it and writes nothing back);
* ``secrets``: the Secrets c5c3.cobaltcore.generated_secret ensures before the
  objects that need them (passwords and credential secrets are generated there),
  and ``credential_secrets``: the same credential Secrets completed afterwards with
  the credential's ID (copied from K-ORC's status.id) and a clouds.yaml;
* ``role_assignments``, ``endpoints``, ``services``: what the modules
  keystone_role_assignments, keystone_endpoint_regions and keystone_verify get.

No Kubernetes client, no OpenStack client, no Ansible: unit-tested on its own.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import copy
import json
import string

try:
    import yaml
    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML comes with Ansible
    HAS_YAML = False

from ansible_collections.c5c3.cobaltcore.plugins.module_utils import naming

try:
    from urllib.parse import urlparse
except ImportError:  # pragma: no cover - Python 2 is not supported
    from urlparse import urlparse

# The catalog of seed 003 (ports of its service CRs' status.endpoint and the Keystone
# authUrl path /v3). Octavia and Manila are named but not drawn in the seed: their ports
# and paths are the upstream defaults. Cortex is not an OpenStack service type of the
# service-types authority; "scheduler" is this collection's choice.
SERVICES = {
    "keystone": {"type": "identity", "port": 5000, "path": "/v3", "user": False,
                 "description": "OpenStack Identity (Keystone)"},
    "glance": {"type": "image", "port": 9292, "path": "", "user": True,
               "description": "OpenStack Image (Glance)"},
    "placement": {"type": "placement", "port": 8778, "path": "", "user": True,
                  "description": "OpenStack Placement"},
    "nova": {"type": "compute", "port": 8774, "path": "/v2.1", "user": True,
             "description": "OpenStack Compute (Nova)"},
    "neutron": {"type": "network", "port": 9696, "path": "", "user": True,
                "description": "OpenStack Networking (Neutron)"},
    "cinder": {"type": "volumev3", "port": 8776, "path": "/v3/%(project_id)s", "user": True,
               "description": "OpenStack Block Storage (Cinder)"},
    "octavia": {"type": "load-balancer", "port": 9876, "path": "", "user": True,
                "description": "OpenStack Load Balancing (Octavia)"},
    "manila": {"type": "sharev2", "port": 8786, "path": "/v2", "user": True,
               "description": "OpenStack Shared File Systems (Manila)"},
    "cortex": {"type": "scheduler", "port": 8080, "path": "", "user": True,
               "description": "CobaltCore scheduler (Cortex)"},
}
# The services the seed's ControlPlane enables by default; the rest are optional.
DEFAULT_SERVICES = ("keystone", "glance", "placement", "nova", "neutron", "cinder")
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

# What K-ORC v2.6.0 writes into the Progressing condition while an import filter
# matches nothing (it polls again every 15 s and never gives up).
KORC_IMPORT_NOT_FOUND = "Waiting for OpenStack resource to be created externally"
IMPORT_NOT_FOUND_EXPRESSION = ("status.conditions[?type=='Progressing' && message=='%s'] | [0]"
                               % KORC_IMPORT_NOT_FOUND)


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
    if not naming.is_dns1123_label(name, max_length=naming.DNS1123_LABEL_MAX - len("-keystone-credentials")):
        problems.append("service name %r must be a DNS-1123 label of at most %d characters (it names Secrets)"
                        % (name, naming.DNS1123_LABEL_MAX - len("-keystone-credentials")))
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
    if not naming.is_dns1123_label(s["namespace"]):
        problems.append("namespace %r must be a DNS-1123 label (the OpenStack cluster's namespace)" % (s["namespace"],))
    if not naming.is_label_value(s["cluster"] or ""):
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
    if not naming.is_dns1123_subdomain(s["korc_secret"]):
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


# ---------------------------------------------------------------------------
# Manifests.

def labels(s):
    return {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, naming.OPENSTACK_CLUSTER_NAME_LABEL: s["cluster"]}


def _object(kind, name, s, spec):
    return {"apiVersion": naming.KORC_API_VERSION, "kind": kind,
            "metadata": {"name": name, "namespace": s["namespace"], "labels": labels(s)},
            "spec": spec}


def _korc_credentials(s):
    return {"secretName": s["korc_secret"], "cloudName": s["korc_cloud"]}


def _imported(kind, name, s, query):
    return _object(kind, name, s, {"cloudCredentialsRef": _korc_credentials(s), "managementPolicy": "unmanaged",
                                   "import": {"filter": query}})


def _managed(kind, name, s, resource, detach=False, credentials=None):
    spec = {"cloudCredentialsRef": credentials or _korc_credentials(s), "managementPolicy": "managed",
            "resource": resource}
    if detach:
        spec["managedOptions"] = {"onDelete": "detach"}
    return _object(kind, name, s, spec)


def _refs(s):
    return {"domain": naming.korc_object_name(s["domain"]),
            "admin_project": naming.korc_object_name(s["admin_project"]),
            "service_project": naming.korc_object_name(s["service_project"])}


def import_manifests(s):
    refs = _refs(s)
    objects = [
        _imported("Domain", refs["domain"], s, {"name": s["domain"]}),
        _imported("Project", refs["admin_project"], s, {"name": s["admin_project"], "domainRef": refs["domain"]}),
    ]
    if s["service_project_policy"] == "unmanaged":
        objects.append(_imported("Project", refs["service_project"], s,
                                 {"name": s["service_project"], "domainRef": refs["domain"]}))
    else:
        # keystone-manage bootstrap does not create it: adopt it when it exists, else create
        # it, and never delete it with the K-ORC object.
        objects.append(_managed("Project", refs["service_project"], s,
                                {"name": s["service_project"], "domainRef": refs["domain"]}, detach=True))
    objects.extend(_imported("Role", naming.korc_object_name(role), s, {"name": role}) for role in s["roles"])
    for service in s["services"]:
        if service["name"] == IDENTITY_SERVICE:
            objects.append(_imported("Service", IDENTITY_SERVICE, s,
                                     {"name": IDENTITY_SERVICE, "type": service["type"]}))
    return objects


def catalog_manifests(s):
    objects = []
    for service in s["services"]:
        name = service["name"]
        identity = name == IDENTITY_SERVICE
        if not identity:
            objects.append(_managed("Service", name, s, {"name": name, "type": service["type"], "enabled": True,
                                                         "description": service["description"]}))
        for interface in INTERFACES:
            # The identity endpoints are the bootstrap's: K-ORC adopts them (same service, interface
            # and URL) and leaves them in Keystone when the K-ORC object goes.
            objects.append(_managed("Endpoint", naming.korc_endpoint(name, interface), s,
                                    {"serviceRef": name, "interface": interface,
                                     "url": service["%s_url" % interface], "enabled": True}, detach=identity))
    return objects


def _users(s):
    return [service for service in s["services"] if service["user"]]


def user_manifests(s):
    refs = _refs(s)
    return [_managed("User", service["name"], s, {
        "name": service["name"], "description": "%s service user (c5c3.cobaltcore)" % service["name"],
        "domainRef": refs["domain"], "defaultProjectRef": refs["service_project"], "enabled": True,
        "passwordRef": naming.service_keystone_user_secret(service["name"])}) for service in _users(s)]


def application_credential_manifests(s):
    # Keystone lets only the owner create an application credential, and a restricted
    # credential (K-ORC's own) may not create any: K-ORC creates each one with the service
    # user's own password credentials, scoped to the service project.
    objects = []
    for service in _users(s):
        name = service["name"]
        objects.append(_managed("ApplicationCredential", name, s, {
            "name": name, "description": "%s service credentials (c5c3.cobaltcore)" % name,
            "userRef": name, "secretRef": naming.service_keystone_credentials_secret(name),
            "roleRefs": [naming.korc_object_name(role) for role in service["roles"]],
            "unrestricted": False,
        }, credentials={"secretName": naming.service_keystone_user_secret(name), "cloudName": name}))
    return objects


def _secret_labels(s, service):
    result = labels(s)
    result["c5c3.io/openstack-service"] = service
    return result


def secret_specs(s):
    """Input of c5c3.cobaltcore.generated_secret: password and credential Secrets, values generated there."""
    specs = []
    for service in _users(s):
        name = service["name"]
        specs.append({
            "name": naming.service_keystone_user_secret(name), "namespace": s["namespace"],
            "labels": _secret_labels(s, name),
            "generate": [{"key": naming.KORC_PASSWORD_KEY, "length": PASSWORD_LENGTH}],
            "templates": {naming.KORC_CLOUDS_KEY: {"clouds": {name: {
                "auth": {"auth_url": s["korc_auth_url"], "username": name,
                         "password": "${%s}" % naming.KORC_PASSWORD_KEY,
                         "user_domain_name": s["domain"], "project_name": s["service_project"],
                         "project_domain_name": s["domain"]},
                "region_name": s["region"], "interface": s["korc_interface"], "identity_api_version": 3,
            }}}},
        })
        specs.append({
            "name": naming.service_keystone_credentials_secret(name), "namespace": s["namespace"],
            "labels": _secret_labels(s, name),
            "generate": [{"key": naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY, "length": CREDENTIAL_SECRET_LENGTH}],
        })
    return specs


def catalog_plan(settings):
    s = normalize_settings(settings)
    refs = _refs(s)
    plan = {
        "settings": dict((k, v) for k, v in s.items() if k != "services"),
        "namespace": s["namespace"],
        "imports": import_manifests(s),
        "catalog": catalog_manifests(s),
        "users": user_manifests(s),
        "application_credentials": application_credential_manifests(s),
        "secrets": secret_specs(s),
        "credential_secrets": credential_secret_specs(s),
        "role_assignments": [{"user": service["name"], "user_domain": s["domain"], "project": s["service_project"],
                              "project_domain": s["domain"], "roles": list(service["roles"])}
                             for service in _users(s)],
        "endpoints": [{"service": service["name"], "type": service["type"], "interface": interface,
                       "url": service["%s_url" % interface]}
                      for service in s["services"] for interface in INTERFACES],
        "services": [{"name": service["name"], "type": service["type"], "user": service["user"],
                      "roles": list(service["roles"]) if service["user"] else [],
                      "public_url": service["public_url"], "internal_url": service["internal_url"],
                      "credentials_secret": (naming.service_keystone_credentials_secret(service["name"])
                                             if service["user"] else None)}
                     for service in s["services"]],
        "refs": refs,
    }
    return plan


def refs_of(manifests):
    """[{api_version, kind, name, namespace}] for c5c3.cobaltcore.wait."""
    return [{"api_version": m["apiVersion"], "kind": m["kind"], "name": m["metadata"]["name"],
             "namespace": m["metadata"].get("namespace")} for m in manifests]


def credential_secret_specs(s):
    """generated_secret input completing each credential Secret once K-ORC created the credential.

    K-ORC v2.6.0 writes the credential's ID only into the ApplicationCredential's status.id;
    the module copies it (values_from) and renders a clouds.yaml whose secret is the
    generated ``value``, referred to as ${value}: the secret never passes through Ansible.
    """
    specs = []
    for service in _users(s):
        name = service["name"]
        specs.append({
            "name": naming.service_keystone_credentials_secret(name), "namespace": s["namespace"],
            "labels": _secret_labels(s, name),
            "generate": [{"key": naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY, "length": CREDENTIAL_SECRET_LENGTH}],
            "values_from": [{"key": "application_credential_id", "api_version": naming.KORC_API_VERSION,
                             "kind": "ApplicationCredential", "name": name, "field": "status.id"}],
            "values": {"auth_url": s["consumer_auth_url"], "region_name": s["region"]},
            "templates": {naming.KORC_CLOUDS_KEY: {"clouds": {name: {
                "auth_type": "v3applicationcredential",
                "auth": {"auth_url": s["consumer_auth_url"], "application_credential_id": "${application_credential_id}",
                         "application_credential_secret": "${%s}" % naming.KORC_APPLICATION_CREDENTIAL_SECRET_KEY},
                "region_name": s["region"], "interface": s["consumer_interface"], "identity_api_version": 3,
            }}}},
        })
    return specs


# ---------------------------------------------------------------------------
# An import that finds nothing.

def _filter_text(spec):
    query = ((spec or {}).get("import") or {}).get("filter") or {}
    return json.dumps(query, sort_keys=True)


def import_failure_message(wait_result, manifests):
    """One message for a failed import wait: per object K-ORC's condition text and its import filter.

    wait_result is what c5c3.cobaltcore.wait returned (registered with failed_when false):
    ``objects`` (or ``resources``) with ``missing`` lines per object, and ``msg``. The
    readiness rule already names the filter of an import that matches nothing.
    """
    wait_result = wait_result or {}
    by_name = dict(((m["kind"], m["metadata"]["name"]), m) for m in manifests or [])
    lines = []
    for entry in wait_result.get("objects") or wait_result.get("resources") or []:
        if entry.get("ready"):
            continue
        manifest = by_name.get((entry.get("kind"), entry.get("name")))
        missing = [m for m in entry.get("missing") or [] if not m.startswith("failed_expression ")]
        where = "%s %s/%s" % (entry.get("kind"), entry.get("namespace"), entry.get("name"))
        if not entry.get("found", True):
            lines.append("%s: the object does not exist" % where)
            continue
        nothing = [m for m in missing if "matches nothing" in m]
        text = "; ".join(nothing or missing) or "not ready"
        spec = (manifest or {}).get("spec") or {}
        if spec.get("managementPolicy") == "unmanaged" and "import filter" not in text:
            text += " (import filter %s)" % _filter_text(spec)
        lines.append("%s: %s" % (where, text))
    if not lines:
        return "K-ORC import failed: %s" % wait_result.get("msg", "no details")
    return "K-ORC could not import what the Keystone bootstrap should have created:\n" + "\n".join(
        "- " + line for line in lines)


# ---------------------------------------------------------------------------
# Secret templates (rendered by generated_secret from the Secret's values).

class TemplateError(ValueError):
    pass


def render_template(template, values):
    """A template with ${key} references: a string, or a mapping/list rendered as YAML text.

    Only string leaves are substituted; the result of a mapping is its YAML dump, so a
    value is never parsed as YAML itself.
    """
    def substitute(node, where):
        if isinstance(node, dict):
            return dict((k, substitute(v, "%s.%s" % (where, k))) for k, v in node.items())
        if isinstance(node, list):
            return [substitute(v, "%s[%d]" % (where, i)) for i, v in enumerate(node)]
        if isinstance(node, str):
            try:
                return string.Template(node).substitute(values)
            except KeyError as error:
                raise TemplateError("%s refers to %s, which the Secret does not hold" % (where, error))
            except ValueError as error:
                raise TemplateError("%s is not a valid template: %s" % (where, error))
        return copy.deepcopy(node)
    if isinstance(template, (dict, list)):
        if not HAS_YAML:
            raise TemplateError("rendering a mapping template needs the Python package PyYAML")
        return yaml.safe_dump(substitute(template, "template"), default_flow_style=False, sort_keys=False)
    if isinstance(template, str):
        return substitute(template, "template")
    raise TemplateError("a template is a string or a mapping, got %s" % type(template).__name__)
