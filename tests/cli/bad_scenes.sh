# A table of about 200 bad scenes generated from shipped ones (every key deleted, wrong types, overflowing, denormal
# and other extreme numbers, broken JSON, special files: tests/support/bad_scene_cases.py) through `check` and `run`:
# exit 2 with `<file>: <JSON pointer>: ...` and nothing written, or exit 0 for a scene that is still valid; no crash,
# no hang.
source "$(dirname "$0")/../support/cli_common.sh"
python=/usr/bin/python3
"$python" -c "import jsonschema" 2>/dev/null || { echo "bad_scenes: skipped, /usr/bin/python3 has no jsonschema"; exit 77; }
"$python" "$PERCUSSION_SOURCE_DIR/tests/support/bad_scene_table.py" "$PERCUSSION" "$PERCUSSION_SOURCE_DIR" \
  "$SCRATCH/table" || fail "bad scenes: a promise broken (above)"
