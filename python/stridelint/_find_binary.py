"""Where pip put the `stridelint` binary of this package."""

from __future__ import annotations

import os
import sys
import sysconfig


def find_stridelint_bin() -> str:
    """The path of the `stridelint` executable installed with this package.

    Looks in the scripts directory of the install scheme this package was installed
    with (a virtual environment, the user scheme of `pip install --user`, a `--target`
    or `--prefix` directory), and raises FileNotFoundError naming the places it looked.
    """
    exe = "stridelint" + (sysconfig.get_config_var("EXE") or "")
    package_dir = os.path.dirname(os.path.abspath(__file__))

    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    # `pip install --user`
    user_scheme = _user_scheme()
    if user_scheme is not None:
        candidates.append(
            os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe)
        )
    # `pip install --target DIR`: DIR/bin next to DIR/stridelint; `--prefix`: the scheme's
    # scripts directory relative to the site-packages this package is in.
    candidates.append(os.path.join(os.path.dirname(package_dir), "bin", exe))
    candidates.append(os.path.join(_prefix_of(package_dir), "bin", exe))
    candidates.append(os.path.join(_prefix_of(package_dir), "Scripts", exe))

    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(
        "the stridelint binary was not found; looked in:\n  " + "\n  ".join(candidates)
    )


def _user_scheme() -> str | None:
    if sys.version_info >= (3, 10):
        scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        scheme = "nt_user"
    elif sys.platform == "darwin" and sys._framework:  # type: ignore[attr-defined]
        scheme = "osx_framework_user"
    else:
        scheme = "posix_user"
    return scheme if scheme in sysconfig.get_scheme_names() else None


def _prefix_of(package_dir: str) -> str:
    """`PREFIX` of `PREFIX/lib/pythonX.Y/site-packages/stridelint` (or `Lib/site-packages`)."""
    site_packages = os.path.dirname(package_dir)
    parts = site_packages.split(os.sep)
    for depth in (3, 2):  # lib/pythonX.Y/site-packages, Lib/site-packages
        if len(parts) > depth:
            return os.sep.join(parts[:-depth])
    return site_packages
