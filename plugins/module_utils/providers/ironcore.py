# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""IronCore metal-operator (metal.ironcore.dev/v1alpha1): manifests, validation and the claim plan.

Pure Python: the modules ironcore_bmc, ironcore_server_info and
ironcore_server_claim are thin wrappers over these functions.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import ipaddress
import re

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import kube_names, secret_data
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.kube_names import (
    SELECTOR_OPERATORS as OPERATORS, selector_matches)
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import redfish
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import pool_path
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError, problem
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.openapi_schema import type_name
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps

API_VERSION = "metal.ironcore.dev/v1alpha1"
PROTOCOLS = ("Redfish", "IPMI", "SSH")
SCHEMES = ("http", "https")
# A Server in these states is still being discovered by the metal-operator.
DISCOVERING = ("", "Initial", "Discovery")
IGNITION_KEY = "ignition"

_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$")


def _b64(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


# ---------------------------------------------------------------------------
# BMCs

def bmc_problems(bmcs, secrets):
    """Every problem of the BMC and BMCSecret options, one per field."""
    problems = []
    secret_names = set()
    for index, secret in enumerate(secrets):
        where = "secrets[%d]" % index
        if not kube_names.is_dns1123_subdomain(secret.get("name")):
            problems.append(problem(where + ".name", "%r is not a DNS-1123 subdomain" % (secret.get("name"),)))
        for key in ("username", "password"):
            if not secret.get(key):
                problems.append(problem("%s.%s" % (where, key), "must not be empty"))
        if secret.get("name") in secret_names:
            problems.append(problem(where + ".name", "%s is given twice" % secret.get("name")))
        secret_names.add(secret.get("name"))
    seen = {}
    for index, bmc in enumerate(bmcs):
        where = "bmcs[%d]" % index
        name = bmc.get("name")
        if not kube_names.is_dns1123_subdomain(name):
            problems.append(problem(where + ".name", "%r is not a DNS-1123 subdomain" % (name,)))
        for key in ("name", "mac_address", "ip"):
            value = bmc.get(key)
            if value and (key, value) in seen:
                problems.append(problem("%s.%s" % (where, key), "%s is also %s" % (value, seen[(key, value)])))
            seen.setdefault((key, value), where)
        if not _MAC.match(bmc.get("mac_address") or ""):
            problems.append(problem(where + ".mac_address", "%r is not a MAC address" % (bmc.get("mac_address"),)))
        try:
            ipaddress.ip_address(bmc.get("ip") or "")
        except ValueError:
            problems.append(problem(where + ".ip", "%r is not an IP address" % (bmc.get("ip"),)))
        if bmc.get("protocol", "Redfish") not in PROTOCOLS:
            problems.append(problem(where + ".protocol", "must be one of %s" % ", ".join(PROTOCOLS)))
        port = bmc.get("port")
        if port is not None and not (isinstance(port, int) and 0 < port < 65536):
            problems.append(problem(where + ".port", "%r is not a TCP port" % (port,)))
        if bmc.get("scheme") is not None and bmc.get("scheme") not in SCHEMES:
            problems.append(problem(where + ".scheme", "must be one of %s" % ", ".join(SCHEMES)))
        if secrets and bmc.get("secret") not in secret_names:
            problems.append(problem(where + ".secret", "%r is none of the given secrets (%s)" % (
                bmc.get("secret"), ", ".join(sorted(n for n in secret_names if n)) or "none")))
        for key, value in sorted((bmc.get("labels") or {}).items()):
            if not kube_names.is_label_key(key) or not kube_names.is_label_value(str(value)):
                problems.append(problem("%s.labels.%s" % (where, key), "%r is not a valid Kubernetes label" % (value,)))
    return problems


def secret_login(secret):
    """(username, password) of a BMCSecret object read from the API server: data over stringData, as
    metal-operator reads it (a key in data that does not decode is None, not stringData's)."""
    data, decoded = (secret or {}).get("data") or {}, secret_data.decoded(secret)
    string_data = (secret or {}).get("stringData") or {}
    return tuple(decoded.get(key) if key in data else string_data.get(key) for key in ("username", "password"))


def bmc_url(bmc):
    """An inventory BMC's Redfish address: its scheme (http unless it names one), IP and port."""
    return redfish.base_url(bmc.get("scheme") or "http", bmc["ip"], bmc.get("port"))


def logins_to_check(bmcs, secrets, current_bmcs, current_secrets):
    """The Redfish BMCs of this call whose login the region has not seen yet: a BMC that is new, or whose
    BMCSecret this call creates or changes. Each as (name, systems URL, username, password)."""
    given = dict((s["name"], s) for s in secrets)
    current_bmcs = set(o["metadata"]["name"] for o in current_bmcs)
    current_secrets = dict((o["metadata"]["name"], o) for o in current_secrets)
    logins = []
    for bmc in bmcs:
        secret = given.get(bmc["secret"])
        if secret is None or (bmc.get("protocol") or "Redfish") != "Redfish":
            continue
        login = (secret["username"], secret["password"])
        unchanged = secret_login(current_secrets.get(bmc["secret"])) == login
        if bmc["name"] in current_bmcs and unchanged:
            continue
        url = bmc_url(bmc) + redfish.SYSTEMS
        logins.append((bmc["name"], url) + login)
    return logins


def bmc_secret_manifest(secret):
    return {
        "apiVersion": API_VERSION, "kind": "BMCSecret",
        "metadata": {"name": secret["name"], "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY}},
        "data": {"username": _b64(secret["username"]), "password": _b64(secret["password"])},
    }


def bmc_manifest(bmc):
    protocol = {"name": bmc.get("protocol") or "Redfish"}
    if bmc.get("port") is not None:
        protocol["port"] = bmc["port"]
    if bmc.get("scheme"):
        protocol["scheme"] = bmc["scheme"]
    spec = {
        "access": {"macAddress": bmc["mac_address"].lower().replace("-", ":"), "ip": bmc["ip"]},
        "bmcSecretRef": {"name": bmc["secret"]},
        "protocol": protocol,
    }
    if bmc.get("hostname"):
        spec["hostname"] = bmc["hostname"]
    # The metal-operator copies a BMC's labels to the Servers it discovers behind it.
    labels = dict((k, str(v)) for k, v in (bmc.get("labels") or {}).items())
    labels[naming.MANAGED_BY_LABEL] = naming.MANAGED_BY
    return {"apiVersion": API_VERSION, "kind": "BMC", "metadata": {"name": bmc["name"], "labels": labels}, "spec": spec}


# Credential rotation through a handover account: the consumers of a BMCSecret (metal-operator's controllers) read
# it for every request, so it always holds a login every BMC accepts - the old one, then the handover account's with
# the new password, then the main account's with the new password; the handover account goes last.
HANDOVER_USERNAME = "c5c3-handover"
ROTATION_STEPS = ("start", "switch-back", "finish")


def rotation_step(wanted, live, handover=HANDOVER_USERNAME):
    """Where one BMCSecret's rotation to wanted ({username, password}) is, from its live (username, password):
    start (the main account still has the old password), switch-back (the BMCSecret holds the handover account),
    finish (it holds the wanted login: only a handover account left behind goes). Raises InputError when the live
    BMCSecret names another user: a different username is not a rotation."""
    username, password = live
    if username == handover:
        return "switch-back"
    if username != wanted["username"]:
        raise InputError([problem("secrets.%s" % wanted["name"], "the BMCSecret holds user %r, the inventory names %r: "
                                  "a rotation changes only the password (change the user on the BMCs first)"
                                  % (username, wanted["username"]))])
    return "finish" if password == wanted["password"] else "start"


def password_problem(password, account_service):
    """Why the BMC's AccountService refuses a password of this length (MinPasswordLength, MaxPasswordLength), or
    None."""
    low, high = account_service.get("MinPasswordLength"), account_service.get("MaxPasswordLength")
    if isinstance(low, int) and len(password) < low:
        return "takes passwords of at least %d characters, the inventory's has %d" % (low, len(password))
    if isinstance(high, int) and high > 0 and len(password) > high:
        return "takes passwords of at most %d characters, the inventory's has %d" % (high, len(password))
    return None


def servers_of_bmc(servers, bmc_name):
    return [s for s in servers if ((s.get("spec") or {}).get("bmcRef") or {}).get("name") == bmc_name]


# ---------------------------------------------------------------------------
# Servers

def server_summary(server):
    """What an operator wants to see of a Server."""
    spec = server.get("spec") or {}
    status = server.get("status") or {}
    claim = spec.get("serverClaimRef") or None
    return {
        "name": server["metadata"]["name"],
        "state": status.get("state") or "",
        "power": status.get("powerState") or "",
        "desired_power": spec.get("power") or "",
        "labels": server["metadata"].get("labels") or {},
        "bmc": (spec.get("bmcRef") or {}).get("name"),
        "system_uuid": spec.get("systemUUID") or spec.get("uuid"),
        "claim": {"namespace": claim.get("namespace"), "name": claim.get("name")} if claim else None,
        "unclaimable": bool(spec.get("unclaimable")),
        "maintenance": bool(spec.get("serverMaintenanceRef")) or status.get("state") == "Maintenance",
        "taints": [t for t in spec.get("taints") or [] if isinstance(t, dict)],
    }


def selector_text(selector):
    parts = ["%s=%s" % item for item in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        values = ",".join(expression.get("values") or [])
        parts.append("%s %s%s" % (expression.get("key"), expression.get("operator"),
                                  " (%s)" % values if values else ""))
    return ", ".join(parts) or "(every server)"


def blocking_taints(summary, tolerations=()):
    """The server's NoBind taints that no toleration covers (taints.go tolerates; Evict never blocks)."""
    blocking = []
    for taint in summary.get("taints") or []:
        if taint.get("effect") != "NoBind":
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            blocking.append(taint)
    return blocking


def _tolerates(toleration, taint):
    if toleration.get("key") != taint.get("key"):
        return False
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == (taint.get("value") or "")


def unclaimable_reason(summary, maintained=()):
    """Why metal-operator would not bind this server to a new claim (isServerClaimable), or None.

    maintained: names of servers that a ServerMaintenance refers to (isUnderMaintenanceQueue). The
    collection's claims carry no tolerations, so every NoBind taint blocks.
    """
    if summary["claim"] is not None:
        return "claimed"
    if summary["state"] == "Maintenance":
        return "in maintenance"  # server_controller.go: a ServerMaintenance holds it (spec.serverMaintenanceRef)
    if summary["state"] != "Available":
        return summary["state"] or "unreported"
    if summary["unclaimable"]:
        return "unclaimable"
    if summary["power"] != "Off":
        return "powered %s" % (summary["power"] or "(unreported)")
    if summary["maintenance"] or summary["name"] in maintained:
        return "in maintenance"
    taints = blocking_taints(summary)
    if taints:
        return "tainted %s" % ",".join("%s%s:NoBind" % (t.get("key"), "=%s" % t["value"] if t.get("value") else "")
                                       for t in taints)
    return None


def is_claimable(summary, maintained=()):
    """Whether a server (as server_summary gives it) can be bound to a new claim: Available, unclaimed,
    not unclaimable, powered off, not in maintenance and without NoBind taints (serverclaim_controller.go)."""
    return unclaimable_reason(summary, maintained) is None


def maintained_servers(maintenances):
    """Names of the servers that ServerMaintenances refer to."""
    return set(((m.get("spec") or {}).get("serverRef") or {}).get("name") for m in maintenances or [])


def filter_servers(servers, names=None, selector=None, states=None, bmc=None, claimed=None, bmcs=None):
    """Summaries of the servers that pass every given filter (bmcs: a set of BMC names)."""
    result = []
    for server in servers:
        summary = server_summary(server)
        if names and summary["name"] not in names:
            continue
        if selector and not selector_matches(selector, summary["labels"]):
            continue
        if states and summary["state"] not in states:
            continue
        if bmc and summary["bmc"] != bmc:
            continue
        if bmcs is not None and summary["bmc"] not in bmcs:
            continue
        if claimed is not None and (summary["claim"] is not None) != claimed:
            continue
        result.append(summary)
    return result


def last_status_update(server):
    """When the Server's status was last written (RFC 3339), from managedFields, or None.

    metal-operator's discovery timeout counts from the same time (checkLastStatusUpdateAfter).
    """
    return timestamps.last_write(server, subresource="status")


def duration_text(seconds):
    if seconds is None:
        return "for an unknown time"
    if seconds < 120:
        return "for %ds" % seconds
    if seconds < 7200:
        return "for %dm%02ds" % (seconds // 60, seconds % 60)
    return "for %dh%02dm" % (seconds // 3600, seconds % 3600 // 60)


def _power_changing(server):
    """An Available Server not yet Off: metal-operator's handleAvailableState powers every Available Server
    off, whatever its desired power (right after discovery that is still On)."""
    return (server.get("status") or {}).get("powerState") != "Off"


def discovery_problems(bmcs, servers, now):
    """Per BMC, what keeps discovery from being finished: no Server yet, Servers still Initial/Discovery,
    each named with how long it has been in that state, or Available ones whose power is still changing
    (metal-operator powers a discovered Server off; a claim binds it only once it is Off). now: epoch seconds."""
    problems = []
    for name in bmcs:
        mine = servers_of_bmc(servers, name)
        if not mine:
            problems.append("BMC %s: no Server discovered yet" % name)
        busy, settling = [], []
        for server in mine:
            status = server.get("status") or {}
            state = status.get("state") or ""
            if state in DISCOVERING:
                busy.append("%s %s %s" % (server["metadata"]["name"], state or "(no state yet)",
                                          duration_text(timestamps.seconds_since(last_status_update(server), now))))
            elif state == "Available" and _power_changing(server):
                settling.append("%s %s" % (server["metadata"]["name"], status.get("powerState") or "(unreported)"))
        if busy:
            problems.append("BMC %s: %s still being discovered" % (name, ", ".join(busy)))
        if settling:
            problems.append("BMC %s: %s Available but not yet powered off" % (name, ", ".join(settling)))
    return problems


def _all_but_state(status):
    return dict((k, v) for k, v in (status or {}).items() if k != "state")


def discovery_restarts(seen, servers):
    """Servers whose discovery started over; records in seen ({name: (last status update, status but its
    state)}) the servers in Discovery and powered on.

    metal-operator puts a Server back to Initial when its probe agent has not reported within the
    discovery timeout, and the next pass starts Discovery again: the state may be Discovery both times
    a caller looks, but the status was written again with nothing but its state changed. Any other
    status write in Discovery is progress, not a restart: the probe's report lands as
    status.networkInterfaces before the state becomes Available.
    """
    found = []
    for server in servers:
        name = server["metadata"]["name"]
        status = server.get("status") or {}
        updated = last_status_update(server)
        if name in seen and status.get("state") in DISCOVERING and updated != seen[name][0]:
            if _all_but_state(status) == seen[name][1]:
                found.append(name)
                continue
        if status.get("state") == "Discovery" and status.get("powerState") == "On":
            seen[name] = (updated, _all_but_state(status))
    return sorted(found)


def count_states(summaries):
    counts = {}
    for summary in summaries:
        state = summary["state"] or "unreported"
        counts[state] = counts.get(state, 0) + 1
    return counts


# ---------------------------------------------------------------------------
# Claims

def claim_manifest(pool, name, namespace):
    spec = {
        "power": pool.get("power") or "On",
        "image": pool["image"],
        "serverSelector": pool["selector"],
    }
    if pool.get("ignition_secret"):
        spec["ignitionSecretRef"] = {"name": pool["ignition_secret"]}
    labels = {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, naming.POOL_LABEL: pool["name"]}
    return {"apiVersion": API_VERSION, "kind": "ServerClaim",
            "metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": spec}


def ignition_secret_manifest(pool, namespace):
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": pool["ignition_secret"], "namespace": namespace,
                         "labels": {naming.MANAGED_BY_LABEL: naming.MANAGED_BY, naming.POOL_LABEL: pool["name"]}},
            "data": {IGNITION_KEY: _b64(pool["ignition"])}}


def pool_problems(pools):
    problems = []
    seen = set()
    for index, pool in enumerate(pools):
        where = "pools[%d]" % index
        if not kube_names.is_dns1123_label(pool.get("name")):
            problems.append(problem(where + ".name", "%r is not a DNS-1123 label" % (pool.get("name"),)))
        if pool.get("name") in seen:
            problems.append(problem(where + ".name", "%s is given twice" % pool.get("name")))
        seen.add(pool.get("name"))
        count = pool.get("count")
        if not isinstance(count, int) or count < 0:
            problems.append(problem(where + ".count", "must be a whole number >= 0, got %r" % (count,)))
        if not pool.get("image"):
            problems.append(problem(where + ".image", "must name the server image"))
        selector = pool.get("selector") or {}
        if not (selector.get("matchLabels") or selector.get("matchExpressions")):
            problems.append(problem(where + ".selector", "must select servers (matchLabels or matchExpressions); an "
                                    "empty selector would take servers of every pool"))
        for number, expression in enumerate(selector.get("matchExpressions") or []):
            if expression.get("operator") not in OPERATORS:
                problems.append(problem("%s.selector.matchExpressions[%d].operator" % (where, number),
                                        "%r is not one of %s" % (expression.get("operator"), ", ".join(OPERATORS))))
    return problems


def stale_reservations(servers, claims):
    """Servers reserved (spec.serverClaimRef) for one of these claims while the claim is bound to another server.

    metal-operator v0.7.0 can leave one when two reconciles of a claim race on a stale cache: the claim's serverRef
    names one server and a second server keeps the claim's reference. The claim's serverRef is immutable, so that
    reservation is never used, and metal-operator releases a server only once its claim is gone: the server stays out
    of every other claim's reach. Clearing the reference (the API allows it) makes it Available again, as
    metal-operator does itself for a claim that is gone."""
    bound = dict(((c["metadata"].get("namespace"), c["metadata"]["name"]),
                  ((c.get("spec") or {}).get("serverRef") or {}).get("name")) for c in claims)
    stale = []
    for server in servers:
        ref = (server.get("spec") or {}).get("serverClaimRef") or {}
        claimed = bound.get((ref.get("namespace"), ref.get("name")))
        if claimed and claimed != server["metadata"]["name"]:
            stale.append(server)
    return stale


def _claim_index(pool_name, claim_name):
    prefix = pool_name + "-"
    suffix = claim_name[len(prefix):] if claim_name.startswith(prefix) else ""
    return int(suffix) if suffix.isdigit() else None


def _bound(claim):
    return (claim.get("status") or {}).get("phase") == "Bound"


def _match(demands, candidates):
    """Maximum matching of pool slots to servers (augmenting paths); returns {pool: matched count}."""
    slots = [pool for pool, count in demands for unused in range(count)]
    owner = {}

    def augment(slot, seen):
        for server in candidates[slots[slot]]:
            if server in seen:
                continue
            seen.add(server)
            if server not in owner or augment(owner[server], seen):
                owner[server] = slot
                return True
        return False

    for slot in range(len(slots)):
        augment(slot, set())
    matched = {}
    for slot in owner.values():
        matched[slots[slot]] = matched.get(slots[slot], 0) + 1
    return matched


def plan_claims(pools, servers, claims, release_surplus=False, maintenances=()):
    """What to create, keep and release for each pool, and every shortage.

    pools: [{name, count, selector, ...}]; servers and claims: live objects (the
    claims are those labelled with their pool). Unbound claims that are kept
    still need a server, so they count in the demand. Returns (plan, problems),
    a problem per pool that is short of servers (pools[<index>].count).
    """
    by_pool = dict((pool["name"], []) for pool in pools)
    for claim in claims:
        pool_name = (claim["metadata"].get("labels") or {}).get(naming.POOL_LABEL)
        if pool_name in by_pool:
            by_pool[pool_name].append(claim)
    summaries = [server_summary(s) for s in servers]
    maintained = maintained_servers(maintenances)
    claimable = [s for s in summaries if is_claimable(s, maintained)]
    plan, demands, candidates = [], [], {}
    for pool in pools:
        existing = sorted(by_pool[pool["name"]], key=lambda c: (
            _claim_index(pool["name"], c["metadata"]["name"]) or 0, c["metadata"]["name"]))
        # Unbound claims go first when claims are released: they hold no server.
        release_order = sorted(existing, key=lambda c: (_bound(c), -(_claim_index(pool["name"], c["metadata"]["name"]) or 0)))
        surplus = release_order[:max(0, len(existing) - pool["count"])]
        kept = [c for c in existing if c not in surplus]
        used = set(_claim_index(pool["name"], c["metadata"]["name"]) for c in existing)
        create, index = [], 1
        while len(kept) + len(create) < pool["count"]:
            if index not in used:
                create.append(naming.server_claim(pool["name"], index))
            index += 1
        waiting = [c["metadata"]["name"] for c in kept if not _bound(c)]
        demands.append((pool["name"], len(create) + len(waiting)))
        candidates[pool["name"]] = [s["name"] for s in claimable if selector_matches(pool["selector"], s["labels"])]
        plan.append({
            "name": pool["name"], "wanted": pool["count"],
            "kept": [c["metadata"]["name"] for c in kept], "create": create, "unbound": waiting,
            "surplus": [c["metadata"]["name"] for c in surplus],
            "release": [c["metadata"]["name"] for c in surplus] if release_surplus else [],
        })
    matched = _match(demands, candidates)
    problems = []
    for index, (pool, (name, demand)) in enumerate(zip(pools, demands)):
        missing = demand - matched.get(name, 0)
        if missing <= 0:
            continue
        matching = [s for s in summaries if selector_matches(pool["selector"], s["labels"])]
        states = count_states(matching)
        # Available but not claimable: say why, or the shortage looks like a miscount.
        held = {}
        for summary in matching:
            reason = unclaimable_reason(summary, maintained)
            if summary["state"] == "Available" and reason and reason != "claimed":
                held.setdefault(reason, []).append(summary["name"])
        shared = [other for other, unused in demands if other != name
                  and set(candidates[other]) & set(candidates[name])]
        problems.append(problem(
            "pools[%d].count" % index,
            "pool %s is %d server(s) short: it needs %d more matching %s, and %d can be claimed; "
            "%d match in all%s%s%s" % (
                name, missing, demand, selector_text(pool["selector"]), matched.get(name, 0), len(matching),
                " (%s)" % ", ".join("%s %d" % item for item in sorted(states.items())) if states else "",
                "; Available but not claimable: %s" % "; ".join(
                    "%s %s" % (reason, ", ".join(sorted(names))) for reason, names in sorted(held.items()))
                if held else "",
                "; pools %s compete for the same servers" % ", ".join(shared) if shared else "")))
    return plan, problems


# cloud-provider-metal's Node: its spec.providerID names the ServerClaim of its server (buildProviderID).
PROVIDER_ID = "metal://%s/%s"


def surplus_claims(pool, workers, claims):
    """The pool's ServerClaims beyond `workers`, in plan_claims' release order (unbound first, then the highest
    index), each as {name, namespace, server, bound, provider_id, ref}: provider_id, the spec.providerID of the Node
    on its server; ref, the claim's reference for the apply module. claims: the ServerClaims labelled with the pool."""
    plan, unused = plan_claims([{"name": pool, "count": workers, "selector": {}}], [], claims, release_surplus=True)
    by_name = dict((c["metadata"]["name"], c) for c in claims)
    result = []
    for name in plan[0]["release"]:
        claim = by_name[name]
        namespace = claim["metadata"].get("namespace")
        result.append({"name": name, "namespace": namespace,
                       "server": ((claim.get("spec") or {}).get("serverRef") or {}).get("name"),
                       "bound": _bound(claim), "provider_id": PROVIDER_ID % (namespace, name),
                       "ref": {"apiVersion": API_VERSION, "kind": "ServerClaim",
                               "metadata": {"name": name, "namespace": namespace}}})
    return result


def servers_released_wait(servers, claims):
    """The wait module's resources and expression for these Servers (names) released from these ServerClaims
    (references with metadata.name and metadata.namespace). Once a claim is gone, handleReservedState
    (server_controller.go) releases its Server only after the BMC confirmed it off: reclaim policy Recycle clears
    spec.serverClaimRef, Retain keeps the reference and sets status.state Released. A Server another claim took since
    counts as released from these."""
    held = ", ".join("'%s/%s'" % (c["metadata"].get("namespace", ""), c["metadata"]["name"]) for c in claims)
    return {"resources": [{"api_version": API_VERSION, "kind": "Server", "name": name} for name in servers],
            "expression": "spec.serverClaimRef == null || status.state == 'Released' || "
                          "!contains([%s], join('/', [spec.serverClaimRef.namespace, spec.serverClaimRef.name]))" % held}


def claim_nodes(claims, nodes):
    """The names of the Nodes on the claims' servers (surplus_claims' entries), in the claims' order; a claim whose
    Node is gone has none."""
    by_provider = dict(((n.get("spec") or {}).get("providerID"), n["metadata"]["name"]) for n in nodes or [])
    return [by_provider[c["provider_id"]] for c in claims or [] if c["provider_id"] in by_provider]


# ---------------------------------------------------------------------------
# From the inventory

MACHINE_KEYS = (("machine_pool", naming.MACHINE_POOL_LABEL), ("machine_class", naming.MACHINE_CLASS_LABEL),
                ("zone", naming.ZONE_LABEL))


def machine_labels(entry):
    """The Server labels of an IronCore machine pool, class and zone ({machine_pool, machine_class, zone})."""
    return dict((label, entry[key]) for key, label in MACHINE_KEYS if entry.get(key))


def pool_selector(pool):
    """The Server selector of a region pool: its IronCore machine pool and class, and its zone (None when it names
    no machine pool or class: a zone alone would take servers of every pool there)."""
    labels = machine_labels(pool.get("ironcore") or {})
    if not labels:
        return None
    if pool.get("zone"):
        labels[naming.ZONE_LABEL] = pool["zone"]
    return {"matchLabels": labels}


def bmcs_from_inventory(entries):
    """ironcore_bmc's bmcs option from the IronCore host's cobaltcore_bmcs.

    Each entry names its credentials (a key of cobaltcore_bmc_credentials) and
    its machine pool, class and zone, which become the BMC's (and so its Servers') labels.
    """
    result = []
    for entry in entries:
        keys = ("credentials",) + tuple(key for key, unused in MACHINE_KEYS)
        bmc = dict((k, v) for k, v in entry.items() if k not in keys)
        bmc["secret"] = naming.bmc_secret(entry.get("credentials") or "")
        bmc["labels"] = dict(entry.get("labels") or {}, **machine_labels(entry))
        result.append(bmc)
    return result


def bmc_secrets_from_inventory(credentials):
    """ironcore_bmc's secrets option from cobaltcore_bmc_credentials ({name: {username, password}})."""
    return [{"name": naming.bmc_secret(name), "username": (value or {}).get("username"),
             "password": (value or {}).get("password")} for name, value in sorted(credentials.items())]


def default_ignition(pool_name, region_name):
    """A minimal Ignition config that tells a server which pool and region it serves."""
    return ('{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "/etc/cobaltcore/pool", '
            '"mode": 420, "contents": {"source": "data:,%s%%0A"}}, {"path": "/etc/cobaltcore/region", '
            '"mode": 420, "contents": {"source": "data:,%s%%0A"}}]}}' % (pool_name, region_name))


def claim_pools(region, settings):
    """ironcore_server_claim's pools option from the region model: every cluster Gardener runs on bare metal.

    A pool selects servers by its IronCore machine pool and class (the labels its
    BMCs carry) and holds one server per worker. settings: {image, ignition (per
    pool name, optional)}. Raises InputError listing every problem.
    """
    problems, result = [], []
    ignitions = settings.get("ignition") or {}
    # Ignition is secret: a problem names the option and the type, never the value.
    if not isinstance(ignitions, dict):
        raise InputError([problem("ignition", "must be a mapping of pool name to Ignition text, got %s"
                                  % type_name(ignitions))])
    problems += [problem("ignition.%s" % name, "must be Ignition text (a string), got %s" % type_name(value))
                 for name, value in sorted(ignitions.items()) if not isinstance(value, str)]
    pools = [pool for key in ("control_planes", "hypervisor_pools", "storage_pools") for pool in region.get(key) or []]
    # A misspelt pool name would boot that pool with the default Ignition instead of the one given.
    known = set(pool["name"] for pool in pools)
    problems += [problem("ignition.%s" % name, "names no bare-metal pool of region %s (its pools: %s)"
                         % (region["name"], ", ".join(sorted(known)) or "none"))
                 for name in sorted(ignitions) if name not in known]
    for pool in pools:
        own = pool.get("ironcore") or {}
        selector = pool_selector(pool)
        if not selector:
            problems.append(problem("%s.ironcore" % pool["name"], "names no machine_pool or machine_class, so no "
                                    "server can be selected for it"))
            continue
        image = own.get("image") or settings.get("image")
        if not image:
            problems.append(problem("%s.ironcore.image" % pool["name"], "no server image (and no default image)"))
            continue
        result.append({"name": pool["name"], "count": pool.get("workers", 1),
                       "selector": selector, "image": image,
                       "ignition": ignitions.get(pool["name"]) or default_ignition(pool["name"], region["name"])})
    if problems:
        raise InputError(problems)
    return result


# ---------------------------------------------------------------------------
# Before the first write (the preflight)

# What the preflight reads on the IronCore cluster (c5c3.cobaltcore.cluster_info's objects).
PREFLIGHT_READS = ({"api_version": API_VERSION, "kind": "BMC"}, {"api_version": API_VERSION, "kind": "Server"})


def _machine_text(labels, zone=False):
    text = "%s/%s" % (labels.get(naming.MACHINE_POOL_LABEL) or "-", labels.get(naming.MACHINE_CLASS_LABEL) or "-")
    return text + " in %s" % (labels.get(naming.ZONE_LABEL) or "no zone") if zone else text


def uncarried_pool_problems(region, inventory_bmcs, bmcs, servers):
    """Every pool of the region whose servers nothing can carry, one problem each.

    A pool is carried when a BMC the inventory registers (cobaltcore_bmcs), a registered BMC or a
    discovered Server has labels its selector matches: the metal-operator copies a BMC's labels to
    its Servers, and a claim binds only a Server its selector matches. bmcs, servers: the objects read.
    """
    carriers = [bmc["labels"] for bmc in bmcs_from_inventory(inventory_bmcs or [])]
    carriers += [(item.get("metadata") or {}).get("labels") or {} for item in list(bmcs or []) + list(servers or [])]
    problems = []
    for key in ("control_planes", "hypervisor_pools", "storage_pools"):
        for index, pool in enumerate(region.get(key) or []):
            selector = pool_selector(pool)
            if not selector or any(selector_matches(selector, labels) for labels in carriers):
                continue
            own = dict(pool.get("ironcore") or {}, zone=pool.get("zone"))
            wanted = " and ".join("%s %s" % (name.replace("_", " "), own[name])
                                  for name, unused in MACHINE_KEYS if own.get(name))
            zoned = bool(pool.get("zone"))
            offered = ", ".join(sorted(set(_machine_text(labels, zoned) for labels in carriers))) or "nothing"
            problems.append(problem(pool_path(key, index, pool["name"]) + ".ironcore",
                                    "no BMC or Server carries %s, so no server can be claimed for %s (IronCore and "
                                    "the inventory's BMCs carry machine pool/class%s %s)"
                                    % (wanted, pool["name"], " in zone" if zoned else "", offered), "region"))
    return problems
