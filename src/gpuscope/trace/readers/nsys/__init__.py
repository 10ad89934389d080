"""Nsight Systems: the SQLite export, the `.nsys-rep` report and the `nsys stats` reports."""

from gpuscope.trace.readers.nsys.reader import NsysReader

__all__ = ["NsysReader"]
