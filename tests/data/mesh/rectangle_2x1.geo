// gmsh -2 rectangle_2x1.geo -o rectangle_2x1.msh   (format 4.1, no physical groups: points and lines saved too)
SetFactory("OpenCASCADE");
Rectangle(1) = {0, 0, 0, 2, 1};
Mesh.MeshSizeMax = 0.25;
