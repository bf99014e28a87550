// The one source of each precompiled-header anchor target (cmake/GpulabPch.cmake): CMake compiles
// a target's precompiled header only for a target with sources. Nothing here is linked.
