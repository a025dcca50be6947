# tests of the stl reader and tools
