"""ptxbench's trusted Python for Triton candidates (docs/triton.md).

One module per concept: triton_check (the static checker), triton_build (the build pass),
shim_driver (the runner's shim, embedded in libptxb_triton_shim.so), platform_key (the key both
sides pin) and launch_probe (the kernel that calibrates Triton's launch path). CMake embeds them in
the binaries (cmake/EmbedText.cmake); ptxbench writes the package to its cache to run the scripts.
"""
