"""The exceptions of metricdp: a small hierarchy, each carrying what the command line prints.

* :class:`InputError` (also a :class:`ValueError`): a malformed input or a parameter out of
  its domain; ``field`` is the library's path of the field (``prior[3]``, ``matrix[2][7]``,
  ``epsilon``), the same the ``mdp`` command prints before its colon.
* :class:`NotPrivate`: the audit did not pass (verdict ``fail``); ``report`` is the
  :class:`metricdp.Report` (or None when refused without an audit, as a repair that would
  move too much probability).
* :class:`Inconclusive`: the audit could not decide within its precision budget.
* :class:`SolverError` (also a :class:`RuntimeError`): a float solver, the exact repair or
  a certificate failed.
"""

from __future__ import annotations

from typing import Any, Optional


class MdpError(Exception):
    """The base class of every metricdp error."""


class InputError(MdpError, ValueError):
    """A malformed input: ``field`` names it, ``message`` says what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field not in ("", "$") else message)

    def __reduce__(self) -> Any:  # raised on a Dask worker, re-raised on the driver
        return (type(self), (self.field, self.message))


class _AuditError(MdpError):
    def __init__(self, report_json: Optional[str], text: str) -> None:
        from .report import Report

        self.report: Optional[Any] = Report(report_json) if report_json else None
        self._json = report_json
        self.text = text
        super().__init__(text)

    def __reduce__(self) -> Any:
        return (type(self), (self._json, self.text))


class NotPrivate(_AuditError):
    """The matrix is not ε·d private as claimed; ``report.witness`` names the violation."""


class Inconclusive(_AuditError):
    """The audit could not decide; ``report`` says which check."""


class SolverError(MdpError, RuntimeError):
    """A float solver, the exact repair or a certificate failed."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


__all__ = ["MdpError", "InputError", "NotPrivate", "Inconclusive", "SolverError"]
