"""The region report in a real browser: playbooks/report.yml on the converged region, its page opened in Debian's
headless Chromium through chromedriver (Selenium); the pool-sharing matrix against the inventory's own claims, no
Secret value in the page or the Markdown, a re-run that writes nothing, and the region's infrastructure phase marked
failing while its MariaDB fails (the fault of test_control_plane_health.py, taken out again)."""

import glob
import shutil
import tempfile
import time

import pytest
import yaml

from conftest import (REGION_HOST, REGION_NAMESPACE, REPO, failures, kubeconfig_secrets, run_playbook, secrets_of,
                      standins_restored, update_standins, wait_truthy)
from regionlab import config
from test_control_plane_health import FAILURE, _mariadb_condition

REPORT = REPO / "playbooks" / "report.yml"
INVENTORY = REPO / "inventories" / "lab"
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# Headless, and nothing that reaches out: the machine has no internet, and Chromium's background services would
# only flood refused connections.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000"]
SCREENSHOT_COPY = REPO / ".cache" / "report-screenshot.png"


def expected_matrix():
    """{(tenant, pool)} that the inventory's claims name, and the pools of hosts.yml, both read here."""
    hosts = yaml.safe_load((INVENTORY / "hosts.yml").read_text())["all"]["children"]
    pools = [h for group in ("hypervisor_pools", "storage_pools") for h in hosts[group]["hosts"]]
    pairs = set()
    for path in sorted(glob.glob(str(INVENTORY / "tenants" / "*.y*ml"))):
        for claim in yaml.safe_load_all(open(path)):
            if claim:
                spec = claim["spec"]
                pairs.update((claim["metadata"]["name"], p) for p in spec["hypervisorClusters"] + spec["storageClusters"])
    return pairs, pools


# The keys of the region's Secrets that hold credentials (others hold names or URLs the report may show).
CREDENTIAL_KEYS = ("password", "value", "clouds.yaml", "userKey", "adminKey", "mon-secret", "ceph-secret")


def secret_values():
    """The credentials of the region's Secrets (its OpenStack clusters, a storage pool's Rook) and the fetched
    kubeconfigs' keys."""
    control_plane = config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST)
    namespaces = [REGION_NAMESPACE] + sorted(set("openstack-" + name for name, _p in expected_matrix()[0]))
    found = [secrets_of(control_plane, namespace) for namespace in namespaces]
    found.append(secrets_of(config.STATE / "private" / "kubeconfig" / "st-pool-a.yaml", "rook-ceph"))
    values = [v for secrets in found for data in secrets.values() for k, v in data.items() if k in CREDENTIAL_KEYS]
    assert len(values) > 20, values  # the Secrets are there to compare with
    return values + list(kubeconfig_secrets())


def report(directory, *args):
    started = time.monotonic()
    rc, out = run_playbook(REPORT, "-e", "cobaltcore_report_dir=%s" % directory, *args,
                           COBALTCORE_LAB_DIR=str(config.STATE), ANSIBLE_SHOW_CUSTOM_STATS="1")
    seconds = time.monotonic() - started
    assert rc == 0, failures(out)
    return out, seconds


def changed(out):
    return sorted("%s: %s" % (t["task"]["name"], h) for p in out["plays"] for t in p["tasks"]
                  for h, r in t["hosts"].items() if r.get("changed"))


@pytest.fixture(scope="module")
def browser():
    for path in (CHROMIUM, CHROMEDRIVER):
        assert shutil.which(path), "%s is missing: make test installs it (tests/debian-packages.sh)" % path
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="report-chromium-")
    for flag in CHROMIUM_FLAGS + ["--user-data-dir=" + profile]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _css(driver, selector):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, selector)


def test_the_report_renders_in_chromium_and_marks_a_failing_phase(region, browser, tmp_path, capsys):
    pairs, pools = expected_matrix()
    healthy, failing = tmp_path / "healthy", tmp_path / "failing"
    out, seconds = report(healthy)
    assert changed(out) == ["Create the report's directory: garden", "Write the report as HTML and Markdown: garden"]
    # What AWX keeps of the job (its artifacts): the summary and where the files are, not the files.
    stats = out["global_custom_stats"]["cobaltcore_report"]
    assert stats["region"] == "lab" and stats["files"] == [str(healthy / "lab.html"), str(healthy / "lab.md")]
    assert stats["summary"]["clusters"] == stats["summary"]["clusters_healthy"] > 0, stats
    again, again_seconds = report(healthy)
    assert changed(again) == []  # the same region, the same files: nothing written
    timing = "report.yml on the converged region: %.1fs (re-run %.1fs)" % (seconds, again_seconds)

    browser.get((healthy / "lab.html").as_uri())
    assert browser.title == "CobaltCore region lab - report"
    assert [s.get_attribute("id") for s in _css(browser, "section")] == [
        "clusters", "pool-sharing", "pools", "tenants", "operators", "health", "drift"]
    assert all(h.is_displayed() for h in _css(browser, "section > h2"))
    rows = dict((r.get_attribute("data-cluster"), r) for r in _css(browser, "#cluster-table tr.cluster"))
    hosts = yaml.safe_load((INVENTORY / "hosts.yml").read_text())["all"]["children"]
    assert sorted(rows) == sorted(set(h for g in hosts.values() for h in (g.get("hosts") or {}))), rows
    for name, row in rows.items():
        assert row.find_element("css selector", "td.version").text.startswith("v1."), name
        assert "state-healthy" in row.get_attribute("class").split(), (name, row.text)
    # The matrix: the tenants of the inventory's claims on exactly the pools they name.
    assert [h.get_attribute("data-pool") for h in _css(browser, "#pool-matrix thead th.pool")] == pools
    members = set((c.get_attribute("data-tenant"), c.get_attribute("data-pool"))
                  for c in _css(browser, "#pool-matrix td.member") if c.is_displayed() and c.text.startswith("\u25cf"))
    assert members == pairs
    assert len(_css(browser, "#pool-matrix td.cell")) == len(pools) * len(set(t for t, _p in pairs))
    region_phases = _css(browser, "article[data-namespace='%s'] tr.phase" % REGION_NAMESPACE)
    assert [p.get_attribute("data-phase") for p in region_phases][:2] == ["infrastructure", "identity"]
    assert not _css(browser, "article[data-namespace='%s'] tr.failing" % REGION_NAMESPACE)
    page, markdown = browser.page_source, (healthy / "lab.md").read_text()
    leaked = [v[:6] + "..." for v in secret_values() if v in page or v in markdown]
    assert leaked == [], "Secret values in the report: %s" % leaked

    with standins_restored():
        update_standins(lambda d: d.setdefault("failures", {}).update({"MariaDB/%s" % REGION_NAMESPACE: FAILURE}))
        wait_truthy(lambda: (_mariadb_condition() or {}).get("reason") == FAILURE["reason"], "MariaDB failing", 30)
        report(failing)
    browser.get((failing / "lab.html").as_uri())
    (row,) = _css(browser, "article[data-namespace='%s'] tr.failing" % REGION_NAMESPACE)
    assert row.get_attribute("data-phase") == "infrastructure"
    assert set(row.get_attribute("class").split()) >= {"phase", "state-blocked", "failing"}
    assert row.is_displayed() and "FAILING" in row.text and FAILURE["reason"] in row.text, row.text
    mark = row.find_element("css selector", ".failing-mark")
    assert mark.value_of_css_property("color") == "rgba(155, 28, 28, 1)"  # the page's own style, applied
    assert "not ready" in _css(browser, "article[data-namespace='%s'] h3" % REGION_NAMESPACE)[0].text
    assert "**FAILING** blocked" in (failing / "lab.md").read_text()
    # The whole page in one picture (the driver measures it; the page itself runs no script).
    browser.set_window_size(1400, browser.execute_script("return document.documentElement.scrollHeight"))
    screenshot = tmp_path / "region-report.png"
    assert browser.save_screenshot(str(screenshot))
    SCREENSHOT_COPY.parent.mkdir(exist_ok=True)
    shutil.copy(screenshot, SCREENSHOT_COPY)
    with capsys.disabled():  # shown also under -q: where the screenshot is
        print("\n%s; region report screenshot: %s (copy: %s)" % (timing, screenshot, SCREENSHOT_COPY))
    # Taken out of standins.yaml, the failure heals (mariadb-operator retries every Ready=False).
    wait_truthy(lambda: (_mariadb_condition() or {}).get("status") == "True", "MariaDB ready again", 60)
