"""Benchmark: a release hop of the lab region (playbooks/upgrade.yml, 2025.2 -> 2026.1) on stock ansible-core.

The region starts on seed 003's release: a region already moved (the integration tests leave it on 2026.1) is
emptied and built again first. Prints `name=value` lines, each ratio measured against this machine's floor in
the same run (one ansible.builtin.ping task over the lab inventory, as region_bench.py):

  ping_floor_s            the floor: the median of the ping runs, one right before each run below
  upgrade_check_s         upgrade.yml --check --diff: the plan, nothing written
  upgrade_hop_s           upgrade.yml: the three steps of the hop, each waited for
  upgrade_hop_waiting_s   of it, the seconds its steps waited for the operators
  upgrade_hop_pings       (upgrade_hop_s - upgrade_hop_waiting_s) / ping_floor_s
  upgrade_noop_s          upgrade.yml once the hop is done (changed=0)
  upgrade_noop_pings      upgrade_noop_s / ping_floor_s

The hop is not undone (upstream refuses a downgrade): the region stays on 2026.1.
"""

import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from region_bench import REPO, analyse, ping_floor, timed_playbook, waiting_seconds  # noqa: E402
import regionlab  # noqa: E402  (region_bench put lab/ and tests/integration on the path)
from regionlab import processes  # noqa: E402
from conftest import REGION_HOST, empty_region, get_object  # noqa: E402

UPGRADE = REPO / "playbooks" / "upgrade.yml"
SEED_KEYSTONE = "28.0.0"


def region_keystone_tag():
    """The tag the region's Keystone runs, None without a region."""
    found = get_object(REGION_HOST, "-n", "openstack", "keystones.keystone.openstack.c5c3.io", "keystone")
    return ((found or {}).get("status") or {}).get("installedRelease")


def upgrade(workdir, release, *args):
    variables = Path(workdir) / ("upgrade-%s.json" % release)
    variables.write_text(json.dumps({"cobaltcore_openstack_release": release, "cobaltcore_upgrade_wait_sleep": 1}))
    return timed_playbook(UPGRADE, "-e", "@%s" % variables, *args)


def main():
    owned = not processes.running()
    if not regionlab.is_up():
        regionlab.up()
    floors = []
    try:
        with tempfile.TemporaryDirectory() as workdir:
            if region_keystone_tag() != SEED_KEYSTONE:
                empty_region()
            print("converge %.1fs" % timed_playbook(REPO / "playbooks" / "site.yml")[0], flush=True)
            floors.append(ping_floor(workdir))
            check = upgrade(workdir, "2026.1", "--check", "--diff")[0]
            floors.append(ping_floor(workdir))
            hop, unused_cpu, out = upgrade(workdir, "2026.1")
            waiting = waiting_seconds(out)
            floors.append(ping_floor(workdir))
            noop, unused_cpu, noop_out = upgrade(workdir, "2026.1")
            if analyse(noop_out)[3]:
                raise SystemExit("upgrade.yml after the hop changed something: not idempotent")
    finally:
        if owned:
            regionlab.down()
    floor = statistics.median(floors)
    print("ping_floor_s=%.2f" % floor)
    print("upgrade_check_s=%.1f" % check)
    print("upgrade_hop_s=%.1f" % hop)
    print("upgrade_hop_waiting_s=%.1f" % waiting)
    print("upgrade_hop_pings=%.1f" % ((hop - waiting) / floor))
    print("upgrade_noop_s=%.1f" % noop)
    print("upgrade_noop_pings=%.1f" % (noop / floor))


if __name__ == "__main__":
    main()
