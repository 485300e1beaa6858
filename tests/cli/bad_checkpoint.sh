# A corrupted checkpoint is refused before it is used: exit 2, a message naming the dataset, on 1 and 2 ranks (every
# rank reads a slice; they agree on the first problem, none hangs). So is another scene's, unless allowed.
source "$(dirname "$0")/../support/cli_common.sh"
scene=$INPUTS/bdem/drop_small.json
python=/usr/bin/python3
"$python" -c "import h5py" 2>/dev/null || { echo "bad_checkpoint: skipped, /usr/bin/python3 has no h5py"; exit 77; }
expect_exit 0 "$PERCUSSION" run "$scene" --out "$SCRATCH/good" --steps 20
good=$SCRATCH/good/checkpoints/latest

# corrupt NAME PYTHON: a copy of the good run's directory whose latest checkpoint PYTHON changed (f is the file).
corrupt() {
  rm -rf "$SCRATCH/$1" && cp -r "$SCRATCH/good" "$SCRATCH/$1"
  "$python" - "$SCRATCH/$1/checkpoints/latest" "$2" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    exec(sys.argv[2])
PY
}
# expect_refused NAME MESSAGE: a restart of that copy on 1 and 2 ranks exits 2 naming MESSAGE.
expect_refused() {
  for np in 1 2; do
    expect_exit 2 "$MPIEXEC" -n $np "$PERCUSSION" run "$scene" --out "$SCRATCH/$1" --restart "$SCRATCH/$1" --steps 40
    expect_output "$2"
  done
}

corrupt owner 'f["particles/owner"][5] = 7'
expect_refused owner "particles/owner: an owner is outside [0, ranks_written)"
corrupt partner 'p = f["bonds/pair"][...]; p[3] = [p[3][1], p[3][0]]; f["bonds/pair"][...] = p'
expect_refused partner "bonds/pair: a pair is not two particle ids a < b below the particle count"
corrupt far_partner 'p = f["bonds/pair"][...]; p[-1][1] = 10**9; f["bonds/pair"][...] = p'
expect_refused far_partner "bonds/pair: a pair is not two particle ids a < b below the particle count"
corrupt short 'x = f["particles/velocity"][:-1]; del f["particles/velocity"]; f["particles/velocity"] = x'
expect_refused short "particles/velocity: expected"
corrupt nan 'x = f["particles/position"][...]; x[10, 2] = np.nan; f["particles/position"][...] = x'
expect_refused nan "particles/position, quaternion, velocity or angular_velocity: a value is not finite"
corrupt radius 'r = f["particles/radius"][...]; r[0] = 0; f["particles/radius"][...] = r'
expect_refused radius "particles/radius: a radius is not a positive finite number"
corrupt step 'f.attrs["step"] = -4'
expect_refused step "must be >= 0"

# flip NAME DATASET: a copy of the good run whose latest checkpoint has one bit flipped in the middle of DATASET's
# last stored block. Its Fletcher32 checksum fails: on 2 ranks a block read by one rank only fails on that rank, and
# every rank must still stop with its message.
flip() {
  rm -rf "$SCRATCH/$1" && cp -r "$SCRATCH/good" "$SCRATCH/$1"
  "$python" - "$SCRATCH/$1/checkpoints/latest" "$2" <<'PY'
import sys, h5py
path, name = sys.argv[1:]
with h5py.File(path, "r") as f:
    d = f[name]
    assert d.fletcher32 and d.chunks, name + ": no checksummed blocks"
    block = d.id.get_chunk_info(d.id.get_num_chunks() - 1)
    offset = block.byte_offset + block.size // 2
with open(path, "r+b") as f:
    f.seek(offset)
    byte = f.read(1)[0]
    f.seek(offset)
    f.write(bytes([byte ^ 0x10]))
PY
}
flip flipped_velocity particles/velocity
expect_refused flipped_velocity "particles/velocity: cannot read rows (a block of it fails its Fletcher32 checksum"
# Bond rests fill two blocks; on 2 ranks only rank 1 reads the second.
"$python" -c "import h5py, sys; assert h5py.File(sys.argv[1])['bonds/rest'].id.get_num_chunks() == 2" "$good"
flip flipped_rest bonds/rest
expect_refused flipped_rest "bonds/rest: cannot read rows (a block of it fails its Fletcher32 checksum"

# A checkpoint written before tables carried checksums (contiguous, unfiltered) still restarts, to the same state.
rm -rf "$SCRATCH/old" && cp -r "$SCRATCH/good" "$SCRATCH/old"
"$python" - "$SCRATCH/old/checkpoints/latest" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    tables = []
    f.visititems(lambda name, d: tables.append(name) if isinstance(d, h5py.Dataset) and d.chunks else None)
    for name in tables:
        data, attrs = f[name][...], dict(f[name].attrs)
        del f[name]
        f.create_dataset(name, data=data)
        f[name].attrs.update(attrs)
    assert tables and not any(f[name].chunks for name in tables)
PY

# Another scene's checkpoint: refused naming both scenes, unless the change is deliberate.
other=$INPUTS/bdem/beam_snap_small.json
expect_exit 2 "$PERCUSSION" run "$other" --out "$SCRATCH/good" --restart "$SCRATCH/good" --steps 40
expect_output "a checkpoint of $scene, whose materials, bodies, bonds, contact, obstacles, boundary conditions or gravity differ from $other's"
cp -r "$SCRATCH/good" "$SCRATCH/changed"
expect_exit 0 "$PERCUSSION" run "$other" --out "$SCRATCH/changed" --restart "$SCRATCH/changed" --steps 40 --allow-scene-change

# The good one still continues, and so does the old-format one, to the same state.
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/good" --restart "$SCRATCH/good" --steps 40
expect_exit 0 "$MPIEXEC" -n 2 "$PERCUSSION" run "$scene" --out "$SCRATCH/old" --restart "$SCRATCH/old" --steps 40
expect_exit 0 "$PERCUSSION" compare "$SCRATCH/good/trajectory.h5" "$SCRATCH/old/trajectory.h5" --rtol 0
expect_output "equal"
echo "bad_checkpoint: owners, partners, shapes, non-finite values, radii, a negative step, flipped blocks and another" \
  "scene's checkpoint refused; a checkpoint without checksums restarts"
