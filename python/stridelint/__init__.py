"""stridelint: a static analyzer for tensor layouts in PyTorch, candle and tch-rs code.

The wheel carries the `stridelint` binary (in the environment's scripts directory); this
package only finds it, for `python -m stridelint`.
"""

from ._find_binary import find_stridelint_bin

__all__ = ["find_stridelint_bin"]
