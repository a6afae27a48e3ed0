"""The peak memory of a child process, as the child itself reads it.

``getrusage(RUSAGE_SELF).ru_maxrss`` is no measure there: Linux keeps it across ``execve``, so a
child that ``subprocess`` starts (a fork or vfork of the test runner, then exec) begins with the
runner's own peak, several hundred MB late in a run. ``VmHWM`` of ``/proc/self/status`` is the
peak of the memory the process has had since its exec. ``PEAK_KB`` is source to paste at the top
of the child's code; it defines ``peak_kb()``, which falls back on ``ru_maxrss`` where there is no
``/proc``.
"""

PEAK_KB = (
    "def peak_kb():\n"
    "    try:\n"
    "        with open('/proc/self/status', encoding='ascii') as f:\n"
    "            return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))\n"
    "    except (OSError, StopIteration, ValueError):\n"
    "        import resource\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
)
