"""The metal-operator stand-in with upstream-like timings (standins.yaml timing: upstream, scaled).

metal-operator v0.7.0 notices power changes on its next resync (2 min) and a probe reports after its
PXE boot (about 5 min): scaled down, one server's discovery must show that ordering, and the
collection's discovery report names the server with how long it has been in its state.
"""

import time
import uuid

import pytest
import yaml

from conftest import standins_restored
from regionlab import config
from regionlab.standins import settings
from test_lab_standins import BAREMETAL, METAL, Api, Recorder, bmc, bmc_secret, status, wait_for

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.providers import ironcore

pytestmark = [pytest.mark.lab_only, pytest.mark.standins]  # conftest.LAB_ONLY, conftest.STANDINS_MARK

SCALE = 1.0 / 120
NAME = "timing-test-%s" % uuid.uuid4().hex[:5]


@pytest.fixture
def upstream_timing(lab):
    with standins_restored():
        config.STANDINS.write_text(yaml.safe_dump({"timing": "upstream", "scale": SCALE}))
        metal = Api(BAREMETAL)
        yield metal
        metal.call("DELETE", METAL + "/bmcs/" + NAME)
        metal.call("DELETE", METAL + "/bmcsecrets/" + NAME)
        wait_for(lambda: metal.get(METAL + "/servers/%s-system-0" % NAME) is None, "test Server gone")


def test_discovery_with_upstream_like_delays_keeps_upstreams_ordering(upstream_timing):
    metal, server = upstream_timing, NAME + "-system-0"
    power, probe = settings.UPSTREAM_DELAYS["power"] * SCALE, settings.UPSTREAM_DELAYS["discovery"] * SCALE
    recorder = Recorder(metal, METAL + "/servers", lambda o: (status(o).get("state"), status(o).get("powerState")))
    time.sleep(0.3)
    started = time.monotonic()
    metal.ok("POST", METAL + "/bmcsecrets", bmc_secret(NAME, username="admin", password="s3cret"))
    metal.ok("POST", METAL + "/bmcs", bmc(NAME, NAME))
    reports = []

    def available():
        obj = metal.get(METAL + "/servers/" + server)
        if obj and status(obj).get("state") == "Discovery":
            reports.extend(ironcore.discovery_problems([NAME], [obj], time.time()))
        return obj and status(obj).get("state") == "Available" and status(obj).get("powerState") == "Off"
    wait_for(available, "Server %s Available" % server, timeout=6 * (power + probe))
    # The test's read may come before the watch's event of the same change.
    wait_for(lambda: (server, ("Available", "Off")) in recorder.when, "the watch seeing the power off", timeout=10)
    recorder.stop()
    seen, when = recorder.seen[server], recorder.when
    states = [s for s, unused in seen if s]
    assert [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s] == ["Initial", "Discovery", "Available"], seen
    # The watch may see a value late, never early: bounds from the test's own start only.
    assert ("Discovery", "PoweringOn") in seen and ("Available", "PoweringOff") in seen, seen
    assert when[(server, ("Available", "On"))] - started >= (power + probe) * 0.9  # power on noticed, probe booted
    assert when[(server, ("Available", "Off"))] - started >= (2 * power + probe) * 0.9  # and the power off noticed
    assert any(r.startswith("BMC %s: %s Discovery for " % (NAME, server)) for r in reports), reports
