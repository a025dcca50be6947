# tests of the scene reader and tools
