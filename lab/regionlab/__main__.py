"""python -m regionlab up|down|status|build"""

import argparse
import json
import sys

from . import build, down, processes, status, up


def _print_status(info):
    for name, cluster in info["clusters"].items():
        print("%-20s %-26s %-8s %s" % (
            name, cluster["server"], cluster["version"] or "down", cluster["kubeconfig"]))
    ks = info["keystone"]
    print("%-20s %-26s %-8s %s (cloud %s)" % (
        "keystone", ks["url"], "up" if ks["ready"] else "down", ks["clouds_yaml"], ks["cloud"]))
    korc = info["korc"]
    print("%-20s %-26s %s" % ("k-orc", "watches " + korc["watches"], "up" if korc["ready"] else
                              "down" if korc["installed"] else "not installed (phase 3 brings its CRDs)"))
    for name, ready in sorted(info.get("flux", {}).items()):
        print("%-20s %-26s %s" % ("flux", name, "up" if ready else "down"))
    print("%-20s %-26s %s" % ("charts", info["charts"]["url"], "up" if info["charts"]["ready"] else "down"))
    for name, standin in info["standins"].items():
        print("%-20s %-26s %s" % (name, standin.get("url", ""), "up" if standin["ready"] else "down"))
    for ks in info.get("keystones") or []:
        print("%-20s %-26s %-8s Keystone CR %s/%s" % (
            "keystone (CR)", ks["url"], "up" if ks["ready"] else "down", ks["namespace"], ks["name"]))
    print("processes: %d, resident memory: %d MiB summed over the processes, %d MiB with shared pages counted once"
          % (len(info["processes"]), info["rss_mib"], info["pss_mib"]))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="regionlab", description=__doc__)
    parser.add_argument("command", choices=["up", "down", "status", "build", "running"],
                        help="running: exit 0 when any lab process runs")
    parser.add_argument("--json", action="store_true", help="print status as JSON")
    args = parser.parse_args(argv)
    if args.command == "build":
        print(json.dumps(build.build_all()))
        return 0
    if args.command == "running":
        return 0 if processes.running() else 1
    if args.command == "down":
        stopped = down()
        print("stopped %d lab processes" % len(stopped))
        left = processes.running()
        return 1 if left else 0
    try:
        info = up() if args.command == "up" else status()
    except RuntimeError as exc:
        print("regionlab: %s" % exc, file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        _print_status(info)
        if "seconds" in info:
            print("lab up in %.1fs" % info["seconds"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
