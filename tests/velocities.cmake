# tests of the velocities reader and tools
