#!/usr/bin/env bash
# Lists the source files one GET crosses: WalkTests' `client.get("users/1", as: User.self)` run with code coverage
# once with one GET and once with two; a file is crossed when its lines ran more often with two. The second GET
# runs on a warm connection, so this is the steady-state road (no connection setup).
# Usage: bash Scripts/walk.sh   (builds into .build/coverage; the first build takes several minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build/coverage
# The toolchain's own profile tools: another LLVM's cannot read Swift's profiles.
tools=$(dirname "$(readlink -f "$(command -v swift)")")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
swift build --build-tests --enable-code-coverage --scratch-path "$scratch" >"$out/build.log" 2>&1 ||
    { grep -E 'error:' "$out/build.log" >&2 || tail -20 "$out/build.log" >&2; exit 1; }
for gets in 1 2; do
    rm -rf "$scratch"/debug/codecov/*.profraw
    COURIER_WALK_GETS=$gets swift test --skip-build --enable-code-coverage --scratch-path "$scratch" \
        --filter WalkTests >/dev/null
    "$tools/llvm-profdata" merge -sparse "$scratch"/debug/codecov/*.profraw -o "$out/$gets.profdata"
    binary=$(ls -d "$scratch"/debug/*.xctest | head -1)
    "$tools/llvm-cov" export -format=text -skip-expansions -instr-profile "$out/$gets.profdata" "$binary" >"$out/$gets.json"
done
python3 - "$out/1.json" "$out/2.json" <<'PY'
import json, os, sys

def counts(path):
    # Per file: the sum of the execution counts of its segments that start a region, as a measure of how much ran.
    result = {}
    for data in json.load(open(path))["data"]:
        for f in data["files"]:
            name = f["filename"]
            if "/Sources/Courier/" not in name:
                continue
            result[name.split("/Sources/Courier/")[1]] = sum(s[2] for s in f["segments"] if s[3] and s[4])
    return result

one, two = counts(sys.argv[1]), counts(sys.argv[2])
crossed = sorted(f for f in two if two[f] > one.get(f, 0))
transport = [f for f in crossed if f.startswith("Transport/")]
above = [f for f in crossed if not f.startswith("Transport/")]
print(f"{len(crossed)} files crossed: {len(above)} above the transport, {len(transport)} in Transport/")
for f in above + transport:
    print(f"  {f}")
PY
