#!/usr/bin/env python3
"""The longest compilation units of the last `cargo … --timings` run, for the CI log.

Usage: scripts/timings_top.py [TARGET_DIR] [N]   (default: target, 8 units)

Reads TARGET_DIR/cargo-timings/cargo-timing.html (the report of the latest run) and prints its
total and its N longest units (crate, target, seconds), so that a slow step says where its time
went without opening the HTML report."""
import json
import re
import sys

target = sys.argv[1] if len(sys.argv) > 1 else "target"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 8
path = f"{target}/cargo-timings/cargo-timing.html"
try:
    text = open(path, encoding="utf-8").read()
except OSError as error:
    print(f"timings_top: no report at {path}: {error}")
    sys.exit(0)
match = re.search(r"UNIT_DATA = (\[.*?\n\]);", text, re.S)
if not match:
    print(f"timings_top: {path} has no UNIT_DATA (a newer cargo?)")
    sys.exit(0)
units = [u for u in json.loads(match.group(1)) if u.get("duration", 0) > 0]
units.sort(key=lambda u: u["duration"], reverse=True)
total = re.search(r"DURATION = ([0-9.]+)", text)
built = f"{len(units)} units built" + (f" in {float(total.group(1)):.0f} s" if total else "")
print(f"cargo timings ({path}): {built}; the longest:")
for u in units[:count]:
    name = f"{u['name']}{u.get('target', '')}"
    print(f"  {u['duration']:7.1f} s  {name}")
