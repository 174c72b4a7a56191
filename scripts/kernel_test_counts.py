#!/usr/bin/env python3
"""Counts the kernel tests per target from GoogleTest's JSON output.

    ember_kernel_tests --gtest_output=json:kernel_tests.json
    python3 scripts/kernel_test_counts.py kernel_tests.json

Target tests are named Targets/<Suite>.<Test>/<target>; the others count as "host".
"""
import json
import sys
from collections import defaultdict


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    counts = defaultdict(lambda: {"passed": 0, "skipped": 0, "failed": 0})
    failed = []
    for suite in data.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = t["name"]
            target = name.rsplit("/", 1)[1] if "/" in name else "host"
            full = f"{suite['name']}.{name}"
            if t.get("failures"):
                counts[target]["failed"] += 1
                failed.append(full)
            elif t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                counts[target]["skipped"] += 1
            else:
                counts[target]["passed"] += 1
    print(f"{'target':10} {'passed':>7} {'skipped':>8} {'failed':>7}")
    for target in sorted(counts):
        c = counts[target]
        print(f"{target:10} {c['passed']:7} {c['skipped']:8} {c['failed']:7}")
    for f in failed:
        print("FAILED", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
