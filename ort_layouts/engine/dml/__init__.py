"""DirectML on Linux: the real ONNX Runtime DirectML execution provider and DirectML.dll, run
under Wine (Direct3D 12 by vkd3d, on Vulkan: Mesa's lavapipe on the CPU, or a GPU's driver).

- :mod:`.stack`: where the stack lives, what is missing, the environment of a run, and
  :class:`~.stack.DmlStackInfo` (what a report names: DirectML, ONNX Runtime, vkd3d, Wine,
  the Vulkan driver and device).
- :mod:`.install`: :func:`~.install.setup_dml` installs what is missing
  (``ort-layouts setup dml``); nothing is downloaded at run time.
- :mod:`.client`: :class:`~.client.DmlWorker`, one long-lived Wine process that serves many
  sessions over a small binary protocol on its stdin/stdout, and :class:`~.client.DmlSession`
  (``run(output_names, feeds)``, ``node_assignment()``).
- ``worker.c``: the Windows program on the other end of the pipe (compiled with mingw-w64).

Sessions run with CPU fallback disabled, so a node DirectML cannot take fails session creation
with ONNX Runtime's own text instead of running silently on the CPU.
"""
