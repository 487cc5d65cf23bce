"""Prints the OUT_DIR of one package's build script from a cargo build's JSON messages.

    python3 scripts/build_script_out_dir.py MESSAGES.json PACKAGE

MESSAGES.json is the stdout of `cargo build --message-format=json-render-diagnostics`; the
`build-script-executed` message of PACKAGE (matched in its package id) names the directory. Exits
non-zero unless exactly one such directory is found (scripts/test and scripts/check_amdgcn.sh
read tessera-kernels-ptx's PTX and code objects from it).
"""
import json
import sys

messages, package = sys.argv[1], sys.argv[2]
found = set()
for line in open(messages):
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("reason") == "build-script-executed" and package in msg.get("package_id", ""):
        found.add(msg["out_dir"])
if len(found) != 1:
    sys.exit(f"expected exactly one {package} build script output, found {sorted(found)}")
print(found.pop())
