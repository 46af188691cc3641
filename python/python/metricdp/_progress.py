"""Progress of long computations: the library reports ``(event, phase, value)`` to a
callable (``start`` with the phase's total or None, ``advance`` with steps done,
``finish`` with a summary, ``round`` with an LP round's dict, ``note`` with a line).

``progress=None`` (the default) shows tqdm bars when tqdm is installed (only for phases
that last over a second), ``False`` nothing, a callable receives the events. Ctrl-C stops
the computation at its next report; an exception raised by the callable stops it too and
is raised again to the caller.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator, Optional, cast


class TqdmProgress:
    """Renders the events as tqdm bars (one per phase; LP rounds on their own bar)."""

    def __init__(self) -> None:
        from tqdm.auto import tqdm

        self._tqdm = tqdm
        self._bar: Any = None
        self._lp: Any = None

    def __call__(self, event: str, phase: str, value: Any) -> None:
        if event == "start":
            self._close()
            self._bar = self._tqdm(total=value, desc=phase, delay=1.0, leave=False)
        elif event == "advance" and self._bar is not None:
            self._bar.update(value)
        elif event == "finish":
            self._close()
        elif event == "round":
            if self._lp is None:
                self._lp = self._tqdm(desc="LP rounds", delay=1.0, leave=False)
            self._lp.set_postfix(rows=value["rows"], objective=f"{value['objective']:.9g}", refresh=False)
            self._lp.update(1)
        elif event == "note":
            if any(_shown(b) for b in (self._bar, self._lp)):
                self._tqdm.write(str(value), file=sys.stderr)
            else:
                print(value, file=sys.stderr)

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def close(self) -> None:
        """Close every bar (the computation ended)."""
        self._close()
        if self._lp is not None:
            self._lp.close()
            self._lp = None


def _shown(bar: Any) -> bool:
    """Whether a tqdm bar has been displayed (tqdm.write redraws even bars still in their
    delay)."""
    return bar is not None and getattr(bar, "last_print_t", 0) >= bar.start_t + bar.delay


@contextlib.contextmanager
def resolve(progress: Any) -> Iterator[Optional[Callable[[str, str, Any], None]]]:
    """The callable for a ``progress=`` argument (see the module doc), closed on exit."""
    cb = _callable(progress)
    try:
        yield cb
    finally:
        close = getattr(cb, "close", None)
        if isinstance(cb, TqdmProgress) and close is not None:
            close()


def _callable(progress: Any) -> Optional[Callable[[str, str, Any], None]]:
    if progress is False:
        return None
    if progress is None or progress is True:
        try:
            return TqdmProgress()
        except ImportError:
            return None
    if callable(progress):
        return cast(Callable[[str, str, Any], None], progress)
    raise TypeError("progress: expected None, True, False or a callable(event, phase, value)")
