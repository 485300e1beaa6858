"""Opens a Percussion trajectory.xdmf in ParaView (pvbatch), checks what its reader sees, saves a picture.

    xvfb-run -a pvbatch scripts/check_paraview.py DIR/trajectory.xdmf --frames F \
        [--grid mesh:POINTS:CELLS] [--grid bodies:POINTS:CELLS] ... [--png out.png]

Each --grid names a grid of every frame (particles, bonds, mesh, bodies) and the points and cells ParaView must read
for it in the last frame. Exits 1 with a message when anything differs. tests/cli/paraview.sh runs it when pvbatch
is installed.
"""
import argparse
import os
import sys

from paraview import servermanager
from paraview.simple import (ColorBy, GetActiveViewOrCreate, Render, ResetCamera, SaveScreenshot, Show,
                             UpdatePipeline, Xdmf3ReaderT)


def blocks(data, name=""):
    """(name, dataset) of every leaf of a multiblock dataset, named by its grid ("mesh[2]" -> "mesh")."""
    if data.IsA("vtkMultiBlockDataSet"):
        for i in range(data.GetNumberOfBlocks()):
            meta = data.GetMetaData(i) if data.HasMetaData(i) else None
            child = meta.Get(data.NAME()).split("[")[0] if meta is not None and meta.Has(data.NAME()) else str(i)
            block = data.GetBlock(i)
            if block is not None:
                yield from blocks(block, child)
    else:
        yield name, data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("xdmf")
    parser.add_argument("--frames", type=int, required=True)
    parser.add_argument("--grid", action="append", default=[], help="NAME:POINTS:CELLS")
    parser.add_argument("--png")
    args = parser.parse_args()

    # The top-level-partition reader keeps each grid of a frame as its own block; ParaView's default Xdmf3 reader
    # (spatial partition) reads them as pieces of one dataset, which hides which grid holds what.
    reader = Xdmf3ReaderT(FileName=[args.xdmf])
    times = list(reader.TimestepValues) if reader.TimestepValues is not None else []
    if len(times) != args.frames:
        sys.exit(f"{args.xdmf}: ParaView sees {len(times)} time steps, expected {args.frames}")
    UpdatePipeline(time=times[-1], proxy=reader)
    data = servermanager.Fetch(reader)
    seen = {name: (d.GetNumberOfPoints(), d.GetNumberOfCells()) for name, d in blocks(data)}
    print(f"{args.xdmf}: {len(times)} time steps (last {times[-1]}), grids {seen}")
    failed = False
    for spec in args.grid:
        name, points, cells = spec.split(":")
        want = (int(points), int(cells))
        if seen.get(name) != want:
            print(f"{name}: ParaView reads {seen.get(name)} (points, cells), expected {want}", file=sys.stderr)
            failed = True

    if args.png:
        view = GetActiveViewOrCreate("RenderView")
        view.ViewSize = [800, 600]
        view.ViewTime = times[-1]
        display = Show(reader, view)
        display.SetRepresentationType("Surface With Edges")
        display.PointSize = 12  # the bodies and particles are vertex cells: make them visible
        display.RenderPointsAsSpheres = 1
        ColorBy(display, ("POINTS", "velocity", "Magnitude"))
        display.RescaleTransferFunctionToDataRange(True)
        view.CameraPosition = [6, -8, 5]
        view.CameraViewUp = [0, 0, 1]
        ResetCamera(view)
        Render(view)
        SaveScreenshot(args.png, view, ImageResolution=[800, 600])
        print(f"saved {args.png}")
    # Leave without ParaView's teardown: under xvfb its render window fails to release its GLX context (an X error
    # that turns the exit code to 1) after everything has been checked and saved.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1 if failed else 0)


if __name__ == "__main__":
    main()
