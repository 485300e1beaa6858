// gmsh -3 box_1x2x3.geo -format msh22 -o box_1x2x3_msh22.msh   (legacy format, physical faces and volume)
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 2, 3};
Physical Surface("walls") = {1, 2};
Physical Volume("solid") = {1};
Mesh.MeshSizeMax = 0.6;
