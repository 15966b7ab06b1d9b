"""Runs a command as a child subreaper and writes the CPU seconds (user + system) of every process
it started, orphans included, to a file; exits with the command's status.

run-tests.mjs runs the suite under it: a converter runs in bubblewrap, whose outer process exits
without waiting for the sandbox's first process, so the CPU of LibreOffice, poppler and Tesseract
inside sandboxes reaches no process Node waits for (the per-file column misses it). Orphans are
reparented here and reaped as they end; once the command has ended, those already ended are
reaped too, and any still running (a leak) are counted, not waited for.

Usage: python3 scripts/cpu-of-tree.py RESULT_FILE COMMAND [ARG...]
"""
import ctypes
import os
import resource
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    result, command = sys.argv[1], sys.argv[2:]
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    pid = os.fork()
    if pid == 0:
        os.execvp(command[0], command)
    # Ctrl-C reaches the whole foreground group; the command decides how to end.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    status = 0
    while True:
        done, st = os.wait()
        if done == pid:
            status = st
            break
    left = 0
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if done == 0:
            left = sum(1 for p in os.listdir("/proc") if p.isdigit() and _parent(p) == os.getpid())
            break
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(result, "w") as f:
        f.write(f"{usage.ru_utime + usage.ru_stime:.3f}\t{left}\n")
    return os.waitstatus_to_exitcode(status)


def _parent(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return int(stat[stat.rindex(")") + 2 :].split()[1])
    except (OSError, ValueError):
        return -1


sys.exit(main())
