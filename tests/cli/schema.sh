# The published schemas, read by an independent validator (python3-jsonschema): each is valid draft-7 JSON
# Schema, every shipped scene meets its method's, and it refuses what the program refuses.
source "$(dirname "$0")/../support/cli_common.sh"
source "$PERCUSSION_SOURCE_DIR/scripts/setup.sh" >/dev/null
py=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import jsonschema' 2>/dev/null; then py=$candidate; break; fi
done
[ -n "$py" ] || fail "no python3 with jsonschema (install python3-jsonschema)"

"$py" - "$PERCUSSION_SOURCE_DIR" <<'PYEOF' || fail "schema check"
import copy, glob, json, os, sys
import jsonschema

root = sys.argv[1]
schemas = {}
for path in sorted(glob.glob(os.path.join(root, "docs/schema/*.schema.json"))):
    schema = json.load(open(path))
    jsonschema.Draft7Validator.check_schema(schema)
    schemas[os.path.basename(path)[: -len(".schema.json")]] = jsonschema.Draft7Validator(schema)
assert "bdem" in schemas, schemas.keys()

scenes = sorted(glob.glob(os.path.join(root, "inputs/**/*.json"), recursive=True))
assert len(scenes) >= 18, scenes
for path in scenes:
    doc = json.load(open(path))
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in schemas[doc["method"]].iter_errors(doc)]
    assert not errors, (path, errors)

base = json.load(open(os.path.join(root, "inputs/bdem/beam_snap_small.json")))
bad = [(("materials", 0, "density"), -1), (("bodies", 0, "particle_radius"), "big"), (("gravty",), [0, 0, -9.81]),
       (("time", "step"), -1e-5), (("implicit", "form"), "leapfrog"), (("checkpoint", "keep"), 0),
       (("output", "frame_interval"), 0)]
for where, value in bad:
    doc = copy.deepcopy(base)
    node = doc
    for key in where[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[where[-1]] = value
    errors = list(schemas["bdem"].iter_errors(doc))
    assert errors, (where, value, "accepted")
print(f"{len(schemas)} schema(s), {len(scenes)} scenes valid, {len(bad)} bad cases refused")
PYEOF
