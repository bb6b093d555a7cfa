"""The local CobaltCore region ("the lab"): real API servers, real Keystone, real K-ORC.

One implementation behind `make lab-up|lab-down|lab-status` and the pytest
fixture: `python -m regionlab up|down|status|build`.
"""

import random
import string
import time
from concurrent.futures import ThreadPoolExecutor

from . import build, charts, config, flux, keystone, korc, kube, kubelets, metal, pki, processes, standins


def up(log=print):
    """Start everything that is not running; return what runs where."""
    started = time.monotonic()
    built = build.build_all(log)
    clusters = config.clusters()
    lab_secrets()
    kube.up(clusters, log)
    kubelets.up(clusters)
    metal.up(clusters)
    # The Helm repository Flux pulls the region's charts from (phase 3).
    charts.up(log)
    # The management cluster runs Flux before the region; a Shoot gets it with the Shoot (gardenlet stand-in).
    flux.up(management(clusters))
    standins.up(clusters)
    keystone.up()
    korc.up(clusters)
    info = status()
    info["seconds"] = round(time.monotonic() - started, 1)
    info["build_seconds"] = built
    return info


def management(clusters):
    return [c for c in clusters if "management" in c.groups]


def lab_secrets():
    """The lab rack's BMC passwords and the key backups' passphrase, once (letters and digits, as the inventory's
    lookup makes them)."""
    alphabet = string.ascii_letters + string.digits
    wanted = [(config.bmc_password_file(name), config.BMC_PASSWORD_LENGTH) for name in config.BMC_CREDENTIALS]
    for path, length in wanted + [(config.KEY_BACKUP_PASSPHRASE, config.KEY_BACKUP_PASSPHRASE_LENGTH)]:
        if not path.exists():
            password = "".join(random.SystemRandom().choices(alphabet, k=length))
            pki.write_private(path, password.encode())


def down(log=print):
    """Stop every lab process; leaves data (etcd, Keystone DBs) for the next up."""
    names = processes.running()

    def tier(name):
        # The stand-ins and other clients first (so that the keystone-operator stand-in cannot
        # restart a Keystone or its memcached being stopped), then the Keystones of Keystone CRs and
        # their memcacheds, then the API servers, etcd last; each tier stopped in parallel.
        if name == "etcd":
            return 3
        if name.startswith("apiserver-"):
            return 2
        return 1 if name.startswith((standins.keystones.PREFIX, standins.keystones.CACHE_PREFIX)) else 0

    order = sorted(names, key=lambda n: (tier(n), n))
    for level in (0, 1, 2):
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(processes.stop, [n for n in order if tier(n) == level]))
    processes.stop("etcd")
    for name in processes.running():  # anything started while we were stopping
        processes.stop(name)
    for pattern in ("*.pid", "*.ready"):
        for path in processes.RUN.glob(pattern) if processes.RUN.exists() else []:
            path.unlink()
    return order


def status():
    clusters = config.clusters()
    info = {"clusters": {}, "keystone": None, "korc": None, "processes": processes.running()}
    memory = [processes.memory_bytes(name) for name in info["processes"]]
    info["rss_mib"] = round(sum(rss for rss, dummy in memory) / 1024 ** 2)
    info["pss_mib"] = round(sum(pss for dummy, pss in memory) / 1024 ** 2)
    for cluster in clusters:
        ready = kube.apiserver_ready(cluster)
        info["clusters"][cluster.name] = {
            "server": cluster.server, "kubeconfig": str(cluster.kubeconfig),
            "groups": cluster.groups, "ready": ready,
            "version": kube.server_version(cluster) if ready else None,
        }
    info["keystone"] = {"url": keystone.URL, "ready": keystone.ready(), "clouds_yaml": str(keystone.CLOUDS),
                        "cloud": keystone.CLOUD_NAME}
    info["korc"] = {"ready": korc.ready(), "watches": korc.control_plane(clusters).name,
                    "installed": korc.wanted(clusters)}
    info["charts"] = {"url": charts.URL, "ready": charts.ready()}
    info["metal"] = metal.status()
    info["flux"] = dict((c.name, flux.ready(c)) for c in clusters if flux.running(c))
    info["standins"] = standins.status(clusters)
    info["keystones"] = standins.keystone_instances()
    return info


def is_up():
    info = status()
    return (all(c["ready"] for c in info["clusters"].values())
            and info["keystone"]["ready"] and (info["korc"]["ready"] or not info["korc"]["installed"])
            and info["charts"]["ready"] and all(flux.ready(c) for c in management(config.clusters()))
            and info["metal"]["operator"] and info["metal"]["bmcs"]
            and all(s["ready"] for s in info["standins"].values()))
