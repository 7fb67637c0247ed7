"""`python -m stridelint …`: runs the binary with the same arguments and exit code."""

from __future__ import annotations

import os
import subprocess
import sys

from ._find_binary import find_stridelint_bin


def main() -> int:
    try:
        binary = find_stridelint_bin()
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if sys.platform == "win32":
        # No exec on Windows: run it as a child and pass its exit code on.
        return subprocess.run([binary, *sys.argv[1:]], check=False).returncode
    os.execvp(binary, [binary, *sys.argv[1:]])
    return 2  # not reached


if __name__ == "__main__":
    sys.exit(main())
