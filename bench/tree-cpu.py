"""CPU seconds (user + system) of a command and of every process it starts, written to a file.

Usage: python3 bench/tree-cpu.py RESULT_FILE COMMAND [ARG...]; exits with the command's status.
Why not the children's times of the benchmark itself (getrusage, /proc/self/stat): a converter runs
in bubblewrap, whose outer process exits without waiting for the sandbox's first process, so the
kernel never adds what poppler used inside the sandbox to anyone Node waits for. As a child
subreaper this script inherits such orphans and waits for them, so their times count here.
"""
import ctypes
import os
import resource
import sys

PR_SET_CHILD_SUBREAPER = 36

def main() -> int:
    result, command = sys.argv[1], sys.argv[2:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    pid = os.fork()
    if pid == 0:
        os.execvp(command[0], command)
    status = 0
    while True:
        try:
            done, st = os.wait()
        except ChildProcessError:
            break
        if done == pid:
            status = st
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(result, "w") as f:
        f.write(f"{usage.ru_utime + usage.ru_stime:.3f}\n")
    return os.waitstatus_to_exitcode(status)

sys.exit(main())
