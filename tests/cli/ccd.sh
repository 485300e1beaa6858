# percussion ccd: one 0/1 line per query and a summary against files with exact answers; bad input exits 2 naming
# the file and line.
source "$(dirname "$0")/../support/cli_common.sh"
: "${CCD_QUERY_SETS:?set by ctest}"

"$CCD_QUERY_SETS" "$SCRATCH" 200 7 >"$SCRATCH/sets.log"
for set in constructed random near parallel; do
  for type in vertex-face edge-edge; do
    file="$SCRATCH/${set}_$([ "$type" = vertex-face ] && echo vf || echo ee).csv"
    expect_exit 0 "$PERCUSSION" ccd "$file" --type "$type"
    queries=$(( $(wc -l <"$file") / 8 ))
    # One line per query, in order, then the summary; no false negative.
    [ "$(grep -cE '^[01]$' <<<"$OUT")" -eq "$queries" ] || fail "$file: expected $queries answer lines: $OUT"
    expect_output "summary: $queries queries, false negatives 0, false positives "
    expect_output " us per query ("
    # Every answer line agrees with the file's ground truth where the truth is 1.
    truth=$(awk -F, 'NR % 8 == 1 {print $7}' "$file")
    paste <(echo "$truth") <(grep -E '^[01]$' <<<"$OUT") | awk '$1 == 1 && $2 != 1 {exit 1}' ||
      fail "$file: a query with ground truth 1 answered 0"
  done
done

# A query whose point slides at height 1/256 over the face: a miss at separation 0, a hit at separation 1/128.
# The coordinates are written as rationals of more than 64 bits.
z=00000000000000000000000000000  # 10^29 = 1$z
{
  echo "-1$z,1$z,1,4,1,256,0"; echo "0,1,0,1,0,1,0"; echo "1,1,0,1,0,1,0"; echo "0,1,1,1,0,1,0"
  echo "2$z,1$z,1,4,1,256,0"; echo "0,1,0,1,0,1,0"; echo "1,1,0,1,0,1,0"; echo "0,1,1,1,0,1,0"
} >"$SCRATCH/slide.csv"
expect_exit 0 "$PERCUSSION" ccd "$SCRATCH/slide.csv" --type vertex-face
[ "$(head -n 1 <<<"$OUT")" = 0 ] || fail "slide at separation 0: $OUT"
expect_output "summary: 1 queries, false negatives 0, false positives 0"
expect_exit 0 "$PERCUSSION" ccd "$SCRATCH/slide.csv" --type vertex-face --min-distance 0.0078125
[ "$(head -n 1 <<<"$OUT")" = 1 ] || fail "slide at separation 1/128: $OUT"
expect_output "summary: 1 queries, false negatives 0, false positives 1"

# Bad input: exit 2, the file and the line named.
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/missing.csv" --type edge-edge
expect_output "$SCRATCH/missing.csv: cannot read file"
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/slide.csv" --type vertex-vertex
expect_output "$SCRATCH/slide.csv: --type: expected vertex-face or edge-edge, got 'vertex-vertex'"
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/slide.csv"
expect_output "--type: expected vertex-face or edge-edge"
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/slide.csv" --type edge-edge --min-distance -1
expect_output "--min-distance: expected a non-negative number"
sed '3s/.*/1,2,3,4,5,6/' "$SCRATCH/slide.csv" >"$SCRATCH/columns.csv"
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/columns.csv" --type vertex-face
expect_output "$SCRATCH/columns.csv: line 3: expected 7 comma-separated integers, got 6 columns"
sed '5s/.*/1,2,3,0,5,6,0/' "$SCRATCH/slide.csv" >"$SCRATCH/zero.csv"
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/zero.csv" --type vertex-face
expect_output "$SCRATCH/zero.csv: line 5: column 4: zero denominator"
head -n 7 "$SCRATCH/slide.csv" >"$SCRATCH/short.csv"
expect_exit 2 "$PERCUSSION" ccd "$SCRATCH/short.csv" --type vertex-face
expect_output "$SCRATCH/short.csv: line 7: 7 rows, not a multiple of 8"
echo "ccd: ok"
