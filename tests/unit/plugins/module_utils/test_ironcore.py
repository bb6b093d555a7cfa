# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""IronCore manifests, validation and the claim plan, without a cluster."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json

import jmespath
import pytest

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region import naming
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.region.model import build_region

KVM = {"matchLabels": {naming.MACHINE_CLASS_LABEL: "kvm"}}
STORAGE = {"matchLabels": {naming.MACHINE_CLASS_LABEL: "storage"}}


def server(name, state="Available", machine_class="kvm", claim=None, unclaimable=False):
    spec = {"bmcRef": {"name": name + "-bmc"}, "systemUUID": "uuid-" + name}
    if claim:
        spec["serverClaimRef"] = {"namespace": "claims", "name": claim}
    if unclaimable:
        spec["unclaimable"] = True
    return {"metadata": {"name": name, "labels": {naming.MACHINE_CLASS_LABEL: machine_class}},
            "spec": spec, "status": {"state": state, "powerState": "Off"}}


def claim(name, pool, bound=True):
    return {"metadata": {"name": name, "namespace": "claims", "labels": {naming.POOL_LABEL: pool}},
            "status": {"phase": "Bound" if bound else "Unbound"}}


def pool(name, count, selector=None):
    return {"name": name, "count": count, "selector": selector or KVM, "image": "gardenlinux:1"}


BMC = {"name": "bmc-1", "mac_address": "52:54:00:00:01:01", "ip": "10.0.0.1", "protocol": "Redfish",
       "port": 443, "scheme": "https", "secret": "bmc-rack", "labels": {naming.MACHINE_CLASS_LABEL: "kvm"}}
SECRET = {"name": "bmc-rack", "username": "admin", "password": "s3cret-pass"}


def test_bmc_manifests_carry_access_protocol_secret_and_labels():
    bmc = ironcore.bmc_manifest(BMC)
    assert bmc["spec"] == {"access": {"macAddress": "52:54:00:00:01:01", "ip": "10.0.0.1"},
                           "bmcSecretRef": {"name": "bmc-rack"},
                           "protocol": {"name": "Redfish", "port": 443, "scheme": "https"}}
    assert bmc["metadata"]["labels"][naming.MACHINE_CLASS_LABEL] == "kvm"
    secret = ironcore.bmc_secret_manifest(SECRET)
    assert secret["kind"] == "BMCSecret"
    assert base64.b64decode(secret["data"]["password"]).decode() == "s3cret-pass"
    assert set(secret["data"]) == {"username", "password"}


def test_bmc_problems_names_every_bad_field_at_once():
    bad = dict(BMC, name="Bad_Name", mac_address="52:54", ip="10.0.0.999", port=70000, secret="nope",
               labels={"bad key!": "x"})
    twin = dict(BMC)
    problems = ironcore.bmc_problems([bad, twin, dict(BMC)], [SECRET, dict(SECRET, password="")])
    text = "\n".join(problems)
    for fragment in ("bmcs[0].name", "bmcs[0].mac_address", "bmcs[0].ip", "bmcs[0].port", "bmcs[0].secret",
                     "bmcs[0].labels.bad key!", "bmcs[2].name: bmc-1 is also bmcs[1]",
                     "secrets[1].password: must not be empty", "secrets[1].name: bmc-rack is given twice"):
        assert fragment in text, fragment
    assert "s3cret-pass" not in text
    assert ironcore.bmc_problems([BMC], [SECRET]) == []


def test_selector_matching_with_expressions():
    labels = {"a": "1", "b": "2"}
    assert ironcore.selector_matches({"matchLabels": {"a": "1"}}, labels)
    assert not ironcore.selector_matches({"matchLabels": {"a": "2"}}, labels)
    assert ironcore.selector_matches({"matchExpressions": [{"key": "b", "operator": "In", "values": ["2", "3"]},
                                                           {"key": "c", "operator": "DoesNotExist"}]}, labels)
    assert not ironcore.selector_matches({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]},
                                         labels)
    with pytest.raises(InputError, match="^selector.matchExpressions.operator: 'Gt' is not one of In, NotIn"):
        ironcore.selector_matches({"matchExpressions": [{"key": "a", "operator": "Gt"}]}, labels)


def test_plan_creates_only_missing_claims_and_keeps_existing():
    servers = [server("s1", "Reserved", claim="hv-a-1"), server("s2"), server("s3")]
    plan, problems = ironcore.plan_claims([pool("hv-a", 3)], servers, [claim("hv-a-1", "hv-a")])
    assert problems == []
    assert plan[0]["kept"] == ["hv-a-1"]
    assert plan[0]["create"] == ["hv-a-2", "hv-a-3"]


def test_plan_fills_gaps_in_claim_numbers():
    servers = [server("s%d" % i) for i in range(3)]
    plan, unused = ironcore.plan_claims([pool("hv-a", 3)], servers, [claim("hv-a-2", "hv-a")])
    assert plan[0]["create"] == ["hv-a-1", "hv-a-3"]


def test_plan_reports_a_shortage_with_states_before_anything_is_created():
    servers = [server("s1"), server("s2", "Error"), server("s3", "Reserved", claim="x"), server("s4", "Discovery"),
               server("s5", machine_class="storage")]
    plan, problems = ironcore.plan_claims([pool("hv-a", 3), pool("st-a", 1, STORAGE)], servers, [])
    assert len(problems) == 1
    assert problems[0] == ("pools[0].count: pool hv-a is 2 server(s) short: it needs 3 more matching "
                           "c5c3.io/machine-class=kvm, and 1 can be claimed; 4 match in all (Available 1, Discovery 1, "
                           "Error 1, Reserved 1)")


def test_plan_never_counts_servers_claimed_by_another_pool_or_unclaimable():
    servers = [server("s1", "Available", claim="other-1"), server("s2", unclaimable=True), server("s3")]
    unused, problems = ironcore.plan_claims([pool("hv-a", 2)], servers, [])
    assert "is 1 server(s) short: it needs 2 more" in problems[0] and "1 can be claimed" in problems[0]


def test_pools_sharing_servers_are_matched_jointly():
    any_kvm = {"matchExpressions": [{"key": naming.MACHINE_CLASS_LABEL, "operator": "In", "values": ["kvm", "gpu"]}]}
    servers = [server("k1"), server("k2"), server("g1", machine_class="gpu")]
    # a takes any kvm or gpu, b only kvm: 2 + 1 fit on 3 servers only if a takes the gpu server.
    unused, problems = ironcore.plan_claims([pool("a", 1, any_kvm), pool("b", 2)], servers, [])
    assert problems == []
    unused, problems = ironcore.plan_claims([pool("a", 2, any_kvm), pool("b", 2)], servers, [])
    assert len(problems) == 1 and "compete for the same servers" in problems[0]


def test_unbound_claims_that_are_kept_still_need_a_server():
    plan, problems = ironcore.plan_claims([pool("hv-a", 1)], [server("x", "Error")], [claim("hv-a-1", "hv-a", bound=False)])
    assert plan[0]["create"] == [] and plan[0]["unbound"] == ["hv-a-1"]
    assert "is 1 server(s) short: it needs 1 more" in problems[0]


def test_surplus_is_kept_unless_released_and_unbound_claims_go_first():
    claims = [claim("hv-a-1", "hv-a"), claim("hv-a-2", "hv-a", bound=False), claim("hv-a-3", "hv-a")]
    servers = [server("s1", "Reserved", claim="hv-a-1"), server("s3", "Reserved", claim="hv-a-3")]
    plan, problems = ironcore.plan_claims([pool("hv-a", 1)], servers, claims)
    assert problems == []
    assert plan[0]["surplus"] == ["hv-a-2", "hv-a-3"] and plan[0]["release"] == []
    plan, unused = ironcore.plan_claims([pool("hv-a", 1)], servers, claims, release_surplus=True)
    assert plan[0]["release"] == ["hv-a-2", "hv-a-3"] and plan[0]["kept"] == ["hv-a-1"]


def test_claims_of_other_pools_are_left_alone():
    plan, unused = ironcore.plan_claims([pool("hv-a", 1)], [server("s1")], [claim("hv-b-1", "hv-b")])
    assert plan[0]["kept"] == [] and plan[0]["create"] == ["hv-a-1"] and plan[0]["surplus"] == []


def test_claim_and_ignition_manifests():
    entry = dict(pool("hv-a", 1), ignition='{"ignition": {}}', ignition_secret="hv-a-ignition")
    manifest = ironcore.claim_manifest(entry, "hv-a-1", "claims")
    assert manifest["spec"] == {"power": "On", "image": "gardenlinux:1", "serverSelector": KVM,
                                "ignitionSecretRef": {"name": "hv-a-ignition"}}
    assert manifest["metadata"]["labels"][naming.POOL_LABEL] == "hv-a"
    secret = ironcore.ignition_secret_manifest(entry, "claims")
    assert base64.b64decode(secret["data"]["ignition"]).decode() == '{"ignition": {}}'


def test_pool_problems():
    gt = {"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "a", "operator": "Gt"}]}
    problems = ironcore.pool_problems([dict(pool("hv-a", -1), image=""), dict(pool("hv-a", 1), selector={}),
                                       dict(pool("hv-b", 1), selector=gt)])
    assert problems == [
        "pools[0].count: must be a whole number >= 0, got -1",
        "pools[0].image: must name the server image",
        "pools[1].name: hv-a is given twice",
        "pools[1].selector: must select servers (matchLabels or matchExpressions); an empty selector would take "
        "servers of every pool",
        "pools[2].selector.matchExpressions[1].operator: 'Gt' is not one of In, NotIn, Exists, DoesNotExist"]


@pytest.mark.parametrize("region", ["eu-de-1", "us-east-1", "lab"])
def test_claim_pools_of_the_shipped_inventories(inventory_of, region):
    inventory = inventory_of(region)
    pools = ironcore.claim_pools(build_region(inventory).to_dict(), {"image": "gl:1"})
    assert sorted(p["name"] for p in pools) == sorted(
        h for g in ("control_plane", "hypervisor_pools", "storage_pools") for h in inventory["groups"][g])
    assert ironcore.pool_problems(pools) == []
    for entry in pools:
        assert json.loads(entry["ignition"])["ignition"]["version"] == "3.4.0"
        zone = build_region(inventory).pool(entry["name"]).data.get("zone")
        assert entry["selector"]["matchLabels"].get(naming.ZONE_LABEL) == zone  # a pool with a zone claims there
        machine = set(entry["selector"]["matchLabels"]) - {naming.ZONE_LABEL}
        assert machine == {naming.MACHINE_POOL_LABEL, naming.MACHINE_CLASS_LABEL}


def test_claim_pools_reports_pools_without_machines_or_image():
    region = {"name": "r", "hypervisor_pools": [{"name": "hv-a"}, {"name": "hv-b", "ironcore": {"machine_class": "k"}}]}
    with pytest.raises(InputError) as error:
        ironcore.claim_pools(build_region(region).to_dict(), {})
    assert error.value.problems == [
        "r-control-plane.ironcore: names no machine_pool or machine_class, so no server can be selected for it",
        "hv-a.ironcore: names no machine_pool or machine_class, so no server can be selected for it",
        "hv-b.ironcore.image: no server image (and no default image)"]


def test_claim_pools_refuse_an_ignition_that_is_no_mapping_of_texts_without_quoting_it():
    region = build_region({"name": "r", "control_planes": [{"name": "cp", "ironcore": {"machine_class": "k"}}]}).to_dict()
    with pytest.raises(InputError) as error:
        ironcore.claim_pools(region, {"image": "gl", "ignition": "marker-ignition-secret"})
    assert error.value.problems == ["ignition: must be a mapping of pool name to Ignition text, got string"]
    with pytest.raises(InputError) as error:
        ironcore.claim_pools(region, {"image": "gl", "ignition": {"cp": {"ignition": {"version": "3.4.0"}}}})
    assert error.value.problems == ["ignition.cp: must be Ignition text (a string), got mapping"]
    assert "marker" not in str(error.value)


def test_claim_pools_refuse_an_ignition_for_a_pool_the_region_does_not_have():
    region = build_region({"name": "r", "control_planes": [{"name": "cp", "ironcore": {"machine_class": "k"}}]}).to_dict()
    with pytest.raises(InputError) as error:
        ironcore.claim_pools(region, {"image": "gl", "ignition": {"cq": "marker-ignition-secret"}})
    assert error.value.problems == ["ignition.cq: names no bare-metal pool of region r (its pools: cp)"]
    assert "marker" not in str(error.value)


def test_lab_bmcs_are_valid_and_cover_the_pools(inventory_of):
    hostvars = inventory_of("lab")["hostvars"]["baremetal"]
    bmcs = ironcore.bmcs_from_inventory(hostvars["cobaltcore_bmcs"])
    secrets = ironcore.bmc_secrets_from_inventory({"lab-rack-1": {"username": "u", "password": "p"}})
    assert ironcore.bmc_problems(bmcs, secrets) == []
    assert all(b["secret"] == naming.bmc_secret("lab-rack-1") for b in bmcs)
    classes = [b["labels"][naming.MACHINE_CLASS_LABEL] for b in bmcs]
    region = build_region(inventory_of("lab")).to_dict()
    for entry in ironcore.claim_pools(region, {"image": "gl"}):
        wanted = entry["selector"]["matchLabels"][naming.MACHINE_CLASS_LABEL]
        assert classes.count(wanted) >= 1
    needed = {}
    for entry in ironcore.claim_pools(region, {"image": "gl"}):
        cls = entry["selector"]["matchLabels"][naming.MACHINE_CLASS_LABEL]
        needed[cls] = needed.get(cls, 0) + entry["count"]
    # Every class has a spare machine except storage: growth tests take the spare KVM.
    assert all(classes.count(cls) >= count for cls, count in needed.items())


# ---------------------------------------------------------------------------
# What metal-operator's ServerClaim controller binds (isServerClaimable), and discovery that starts over.

def held(name, **changes):
    obj = server(name)
    for key, value in changes.items():
        if key == "power":
            obj["status"]["powerState"] = value
        else:
            obj["spec"][key] = value
    return obj


def test_plan_counts_only_servers_metal_operator_would_bind():
    servers = [held("on", power="On"), held("maint", serverMaintenanceRef={"name": "m"}),
               held("tainted", taints=[{"key": "example.com/unhealthy", "effect": "NoBind"}]),
               held("evict", taints=[{"key": "example.com/drain", "effect": "Evict"}]), server("free"),
               server("queued")]
    maintenances = [{"spec": {"serverRef": {"name": "queued"}}}]
    unused, problems = ironcore.plan_claims([pool("hv-a", 4)], servers, [], maintenances=maintenances)
    assert len(problems) == 1
    assert "is 2 server(s) short" in problems[0] and "2 can be claimed" in problems[0]
    assert ("Available but not claimable: in maintenance maint, queued; powered On on; "
            "tainted example.com/unhealthy:NoBind tainted") in problems[0]
    unused, problems = ironcore.plan_claims([pool("hv-a", 2)], servers, [], maintenances=maintenances)
    assert problems == []


def test_tolerations_follow_taints_go():
    taint = {"key": "k", "value": "v", "effect": "NoBind"}
    summary = ironcore.server_summary(held("s", taints=[taint]))
    assert ironcore.blocking_taints(summary) == [taint]
    assert ironcore.blocking_taints(summary, [{"key": "k", "operator": "Exists"}]) == []
    assert ironcore.blocking_taints(summary, [{"key": "k", "value": "v"}]) == []
    assert ironcore.blocking_taints(summary, [{"key": "k", "value": "w"}]) == [taint]
    assert ironcore.blocking_taints(summary, [{"key": "k", "operator": "Exists", "effect": "Evict"}]) == [taint]


def discovering(name, state, updated, power="On", bmc="bmc-1"):
    return {"metadata": {"name": name, "managedFields": [
        {"manager": "metal-operator", "operation": "Update", "subresource": "status", "time": updated},
        {"manager": "metal-operator", "operation": "Update", "time": "2026-01-01T00:00:00Z"}]},
        "spec": {"bmcRef": {"name": bmc}}, "status": {"state": state, "powerState": power}}


def test_discovery_problems_name_each_server_and_how_long_it_is_in_its_state():
    now = 1767229200  # 2026-01-01T01:00:00Z
    servers = [discovering("s1", "Discovery", "2026-01-01T00:35:30Z"),
               discovering("s2", "Available", "2026-01-01T00:10:00Z", power="Off", bmc="bmc-2"),
               discovering("s3", "Initial", "2026-01-01T00:59:50Z", power="Off", bmc="bmc-2")]
    assert ironcore.discovery_problems(["bmc-1", "bmc-2", "bmc-3"], servers, now) == [
        "BMC bmc-1: s1 Discovery for 24m30s still being discovered",
        "BMC bmc-2: s3 Initial for 10s still being discovered",
        "BMC bmc-3: no Server discovered yet"]


def test_a_discovered_server_still_powering_off_is_not_discovered_yet():
    """metal-operator powers an Available Server off; until the BMC reports Off no claim can bind it."""
    now = 1767229200
    servers = [discovering("s1", "Available", "2026-01-01T00:59:59Z", power="PoweringOff"),
               discovering("s2", "Available", "2026-01-01T00:59:59Z", power="Off")]
    assert ironcore.discovery_problems(["bmc-1"], servers, now) == [
        "BMC bmc-1: s1 PoweringOff Available but not yet powered off"]
    # With upstream's resync a discovered Server stays On for a while after its desired power became Off.
    servers[0]["status"]["powerState"], servers[0]["spec"]["power"] = "On", "Off"
    assert ironcore.discovery_problems(["bmc-1"], servers, now) == [
        "BMC bmc-1: s1 On Available but not yet powered off"]
    servers[0]["status"]["powerState"] = "Off"
    assert ironcore.discovery_problems(["bmc-1"], servers, now) == []
    # Right after discovery the desired power is still On: metal-operator powers it off all the same.
    servers[0]["status"]["powerState"], servers[0]["spec"]["power"] = "On", "On"
    assert ironcore.discovery_problems(["bmc-1"], servers, now) == [
        "BMC bmc-1: s1 On Available but not yet powered off"]


def test_a_discovery_that_starts_over_is_seen_even_when_both_looks_find_discovery():
    seen = {}
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Discovery", "2026-01-01T00:00:05Z", "PoweringOn")]) == []
    assert seen == {}  # still powering on: its status will be written again
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Discovery", "2026-01-01T00:00:06Z")]) == []
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Discovery", "2026-01-01T00:00:06Z")]) == []
    # 30 minutes later metal-operator wrote Initial, then Discovery again: nothing else of the status changed.
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Discovery", "2026-01-01T00:30:16Z")]) == ["s1"]
    seen = {}
    ironcore.discovery_restarts(seen, [discovering("s1", "Discovery", "2026-01-01T00:00:06Z")])
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Initial", "2026-01-01T00:30:16Z")]) == ["s1"]
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Available", "2026-01-01T00:01:00Z", "Off")]) == []


def test_the_probe_reports_landing_in_discovery_is_progress_not_a_restart():
    """metal-operator writes the report's network interfaces, then (a pass later, or never while the report is
    stale) the state Available: a status written again in Discovery with more than its state changed."""
    seen = {}
    assert ironcore.discovery_restarts(seen, [discovering("s1", "Discovery", "2026-01-01T00:00:06Z")]) == []
    reported = discovering("s1", "Discovery", "2026-01-01T00:00:07Z")
    reported["status"]["networkInterfaces"] = [{"name": "eth0", "macAddress": "aa:bb:cc:dd:ee:ff"}]
    assert ironcore.discovery_restarts(seen, [reported]) == []
    # The report was stale: after the timeout the state alone went Initial and back to Discovery.
    again = discovering("s1", "Discovery", "2026-01-01T00:30:20Z")
    again["status"]["networkInterfaces"] = reported["status"]["networkInterfaces"]
    assert ironcore.discovery_restarts(seen, [again]) == ["s1"]


def test_a_pool_with_a_zone_selects_servers_of_its_zone_only():
    pool = {"name": "hv", "zone": "eu-de-1a", "ironcore": {"machine_pool": "rack-1", "machine_class": "kvm"}}
    assert ironcore.pool_selector(pool) == {"matchLabels": {
        naming.MACHINE_POOL_LABEL: "rack-1", naming.MACHINE_CLASS_LABEL: "kvm", naming.ZONE_LABEL: "eu-de-1a"}}
    # A zone alone selects no pool's servers: every machine of the zone would do.
    assert ironcore.pool_selector({"name": "hv", "zone": "eu-de-1a"}) is None


def current_bmc(name="bmc-1"):
    return {"metadata": {"name": name}, "spec": ironcore.bmc_manifest(dict(BMC, name=name))["spec"]}


def current_secret(username="admin", password="s3cret-pass"):
    """The BMCSecret as the API server returns it (what the module wrote: data, base64)."""
    return ironcore.bmc_secret_manifest(dict(SECRET, username=username, password=password))


def test_a_new_bmc_gets_its_login_checked():
    assert ironcore.logins_to_check([BMC], [SECRET], [], []) == [
        ("bmc-1", "https://10.0.0.1:443/redfish/v1/Systems", "admin", "s3cret-pass")]
    # The BMCSecret exists already (another BMC of the rack uses it): the new BMC is checked all the same.
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc("bmc-2")], [current_secret()]) == [
        ("bmc-1", "https://10.0.0.1:443/redfish/v1/Systems", "admin", "s3cret-pass")]


def test_an_existing_bmc_with_an_unchanged_secret_is_not_checked_again():
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], [current_secret()]) == []
    # stringData counts as the API server would store it.
    string_data = {"metadata": {"name": "bmc-rack"}, "stringData": {"username": "admin", "password": "s3cret-pass"}}
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], [string_data]) == []


def test_an_existing_bmc_whose_secret_changes_is_checked():
    expected = [("bmc-1", "https://10.0.0.1:443/redfish/v1/Systems", "admin", "s3cret-pass")]
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], [current_secret(password="old-pass")]) == expected
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], [current_secret(username="root")]) == expected
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], []) == expected  # its BMCSecret is new
    string_data = {"metadata": {"name": "bmc-rack"}, "stringData": {"username": "admin", "password": "old-pass"}}
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], [string_data]) == expected
    broken = {"metadata": {"name": "bmc-rack"}, "data": {"username": "not base64!", "password": "???"}}
    assert ironcore.logins_to_check([BMC], [SECRET], [current_bmc()], [broken]) == expected


def test_only_redfish_bmcs_with_a_secret_of_this_call_are_checked():
    ipmi = dict(BMC, name="bmc-2", protocol="IPMI")
    foreign = dict(BMC, name="bmc-3", secret="not-in-this-call")
    assert ironcore.logins_to_check([ipmi, foreign], [SECRET], [], []) == []


def test_a_login_to_check_defaults_to_http_on_the_schemes_port():
    bmc = dict(BMC, scheme=None, port=None, ip="fd00::1")
    del bmc["protocol"]  # Redfish by default
    (login,) = ironcore.logins_to_check([bmc], [SECRET], [], [])
    assert login == ("bmc-1", "http://[fd00::1]:80/redfish/v1/Systems", "admin", "s3cret-pass")


def test_a_reservation_for_a_claim_bound_to_another_server_is_stale():
    # metal-operator's claim race: st-b-1 is bound to s7, and s8 still holds its reference.
    bound = dict(claim("st-b-1", "st-b"), spec={"serverRef": {"name": "s7"}})
    waiting = dict(claim("st-a-1", "st-a", bound=False), spec={})
    servers = [server("s7", "Reserved", claim="st-b-1"), server("s8", "Reserved", claim="st-b-1"),
               server("s9", "Reserved", claim="st-a-1"), server("s1", claim="other-namespace-claim"), server("s2")]
    assert [s["metadata"]["name"] for s in ironcore.stale_reservations(servers, [bound, waiting])] == ["s8"]
    # A claim not bound yet (no serverRef) keeps whatever it reserved.
    assert ironcore.stale_reservations(servers, [dict(bound, spec={}), waiting]) == []


def test_an_inventory_bmcs_redfish_address_is_http_unless_it_names_a_scheme():
    assert ironcore.bmc_url({"ip": "10.0.0.1"}) == "http://10.0.0.1:80"
    assert ironcore.bmc_url({"ip": "fd00::1", "scheme": "https", "port": 8443}) == "https://[fd00::1]:8443"


def test_a_server_counts_as_released_once_metal_operator_let_go_of_the_claim():
    claims = [{"apiVersion": ironcore.API_VERSION, "kind": "ServerClaim",
               "metadata": {"name": "hv-pool-x-0", "namespace": "cobaltcore-servers"}}]
    wait = ironcore.servers_released_wait(["server-5"], claims)
    assert wait["resources"] == [{"api_version": ironcore.API_VERSION, "kind": "Server", "name": "server-5"}]

    def released(spec, state="Reserved"):
        return bool(jmespath.search(wait["expression"], {"spec": spec, "status": {"state": state}}))
    held = {"bmcRef": {"name": "bmc-5"}, "serverClaimRef": {"name": "hv-pool-x-0", "namespace": "cobaltcore-servers"}}
    assert not released(held)  # the claim is gone, the BMC has not confirmed the server off yet
    assert released({"bmcRef": {"name": "bmc-5"}}, "Available")  # Recycle: the reference cleared
    assert released(held, "Released")  # Retain: the reference kept, the state Released
    assert released(dict(held, serverClaimRef={"name": "hv-pool-y-0", "namespace": "cobaltcore-servers"}))
