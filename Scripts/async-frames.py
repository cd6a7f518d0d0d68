#!/usr/bin/env python3
"""Lists the largest async frames (contexts) of a binary's Courier functions, read from their async function
pointers (`…Tu` symbols: a relative function offset, then the context size, both 32-bit). A request suspended in an
`async` call keeps the frame of every function on its way down, so these sizes are what a waiting request costs.

Usage: python3 Scripts/async-frames.py Benchmarks/.build/release/CourierBench [N]
"""
import struct
import subprocess
import sys

binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 30
symbols = []
for line in subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[2].endswith("Tu") and "s7Courier" in parts[2]:
        symbols.append((int(parts[0], 16), parts[2]))
sections = []
for line in subprocess.run(["readelf", "-S", "-W", binary], capture_output=True, text=True).stdout.splitlines():
    parts = line.replace("[ ", "[").split()
    if len(parts) > 6 and parts[0].startswith("[") and parts[0] != "[Nr]":
        try:
            sections.append((int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)))
        except ValueError:
            pass
data = open(binary, "rb").read()
sizes = []
for address, name in symbols:
    for start, offset, size in sections:
        if start and start <= address < start + size:
            sizes.append((struct.unpack_from("<iI", data, offset + address - start)[1], name))
            break
names = subprocess.run(
    ["swift", "demangle", "--simplified"], input="\n".join(n for _, n in sizes), capture_output=True, text=True
).stdout.splitlines()
for size, name in sorted(zip((s for s, _ in sizes), names), reverse=True)[:count]:
    print(f"{size:6} {name.replace('async function pointer to ', '')[:150]}")
