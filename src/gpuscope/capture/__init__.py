"""Capturing profiles of Python callables (`gpuscope profile`)."""
